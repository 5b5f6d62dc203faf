import fs from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import YAML from 'yaml';
import { buildKubeconfig } from '../kube/kubeconfig.js';
import { writeFileAtomic } from '../util/atomic-file.js';
import { mountLinks, podRoot, renderVolume, volumeDir, type VolumeSources } from './volumes.js';
import type { Pod } from './types.js';

/** `<workDir>/pods/<namespace>_<pod>_<uid>`: one directory per pod (logs, volumes, root, kubeconfig). */
export function podDirName(pod: Pod): string {
  return `${pod.metadata.namespace ?? 'default'}_${pod.metadata.name}_${pod.metadata.uid ?? ''}`;
}

export function podKubeconfigPath(podDir: string): string {
  return path.join(podDir, 'kubeconfig');
}

/**
 * Writes a pod's volumes and mount links (idempotent: called again to pick up
 * renewed tokens and changed Secrets/ConfigMaps; files that vanished from a
 * source are removed).
 */
export async function materialiseVolumes(podDir: string, pod: Pod, sources: VolumeSources): Promise<void> {
  await fs.mkdir(podDir, { recursive: true, mode: 0o700 });
  const root = podRoot(podDir);
  await fs.mkdir(root, { recursive: true, mode: 0o755 });
  const containers = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
  // Check the mounts first: a bad spec is reported before anything is fetched.
  const links = mountLinks(podDir, pod, containers);
  for (const volume of pod.spec.volumes ?? []) {
    const dir = volumeDir(podDir, volume.name);
    const rendered = await renderVolume(pod, volume, sources);
    await fs.mkdir(dir, { recursive: true, mode: 0o755 });
    if (rendered.kind === 'dir') continue;
    const wanted = new Set<string>();
    for (const f of rendered.files) {
      wanted.add(f.path);
      await writeBytesAtomic(path.join(dir, f.path), f.data, f.mode);
    }
    await removeStale(dir, '', wanted);
  }
  for (const l of links) {
    await fs.mkdir(path.dirname(l.link), { recursive: true, mode: 0o755 });
    const current = await fs.readlink(l.link).catch(() => null);
    if (current === l.target) continue;
    await fs.mkdir(l.target, { recursive: true }).catch(() => undefined); // a subPath that is a file exists already
    await fs.rm(l.link, { recursive: true, force: true });
    await fs.symlink(l.target, l.link);
  }
}

async function removeStale(dir: string, rel: string, wanted: Set<string>): Promise<void> {
  const entries = await fs.readdir(path.join(dir, rel), { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) {
      await removeStale(dir, p, wanted);
      if (!(await fs.readdir(path.join(dir, p))).length) await fs.rmdir(path.join(dir, p));
    } else if (!wanted.has(p) && !e.name.startsWith('.')) {
      await fs.rm(path.join(dir, p), { force: true });
    }
  }
}

/** The pod's kubeconfig: the cluster's API server and CA, and a token of the pod's ServiceAccount. Mode 0600. */
export async function writePodKubeconfig(podDir: string, clusterName: string, server: string, caPem: string, token: string, namespace: string): Promise<string> {
  const file = podKubeconfigPath(podDir);
  const doc = buildKubeconfig([{ name: clusterName, server, caPem, token }]);
  for (const c of doc.contexts) c.context.namespace = namespace;
  await writeFileAtomic(file, YAML.stringify(doc), 0o600);
  return file;
}

/** Readers (a process reading its token) see the old file or the new one, never half of it. */
async function writeBytesAtomic(file: string, data: Buffer, mode: number): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o755 });
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${crypto.randomBytes(4).toString('hex')}.tmp`);
  try {
    await fs.writeFile(tmp, data, { mode });
    await fs.chmod(tmp, mode);
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
}
