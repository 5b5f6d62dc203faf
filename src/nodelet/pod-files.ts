import fs from 'node:fs/promises';
import path from 'node:path';
import { renderVolume, volumeBinds, volumeDir, type VolumeSources } from './volumes.js';
import type { Pod } from './types.js';
import { writeFileAtomic } from '../util/atomic-file.js';

/** `<workDir>/pods/<namespace>_<pod>_<uid>`: one directory per pod (logs, volumes, container bundles). */
export function podDirName(pod: Pod): string {
  return `${pod.metadata.namespace ?? 'default'}_${pod.metadata.name}_${pod.metadata.uid ?? ''}`;
}

/**
 * Who owns a pod's volume files. The kubelet's rule: when every container
 * runs as the same user, credentials belong to that user (mode kept);
 * otherwise they are made readable to all the pod's users (0644) as the
 * kubelet does for projected tokens without fsGroup.
 */
export type VolumeOwner = { uid: number; gid: number } | 'shared';

/**
 * Writes a pod's volumes (idempotent: called again to pick up renewed tokens
 * and changed Secrets/ConfigMaps; files that vanished from a source are
 * removed). The directories stay in place: containers bind-mount them.
 */
export async function materialiseVolumes(podDir: string, pod: Pod, sources: VolumeSources, owner: VolumeOwner = { uid: 0, gid: 0 }): Promise<void> {
  await fs.mkdir(podDir, { recursive: true, mode: 0o700 });
  const containers = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
  // Check the mounts first: a bad spec is reported before anything is fetched.
  const binds = containers.flatMap((c) => volumeBinds(podDir, pod, c));
  for (const volume of pod.spec.volumes ?? []) {
    const dir = volumeDir(podDir, volume.name);
    const rendered = await renderVolume(pod, volume, sources);
    if (rendered.kind === 'dir') {
      // emptyDir: writable by whichever user the containers run as, like the kubelet's 0777.
      await fs.mkdir(dir, { recursive: true });
      await fs.chmod(dir, 0o777);
      continue;
    }
    await fs.mkdir(dir, { recursive: true, mode: 0o755 });
    const wanted = new Set<string>();
    for (const f of rendered.files) {
      wanted.add(f.path);
      const mode = owner === 'shared' ? f.mode | 0o044 : f.mode;
      // Atomic, so a process reading its token never sees half of it. Files stay root's unless another owner is wanted.
      const chown = owner !== 'shared' && (owner.uid !== 0 || owner.gid !== 0) ? owner : undefined;
      await writeFileAtomic(path.join(dir, f.path), f.data, mode, { dirMode: 0o755, owner: chown });
    }
    await removeStale(dir, '', wanted);
  }
  // A subPath that does not exist yet is created as a directory, as the kubelet does.
  for (const b of binds) if (b.subPath) await fs.mkdir(b.source, { recursive: true, mode: 0o777 }).catch(() => undefined);
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
