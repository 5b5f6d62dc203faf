import fs from 'node:fs/promises';
import type { LabConfig } from '../config/index.js';
import { NotFoundError } from '../errors.js';
import { kubeconfigContexts, kubeconfigFileOrigin, type KubeconfigEntry } from '../kube/kubeconfig.js';
import { labKubeconfigFile as labKubeconfigPath } from '../paths.js';

function labKubeconfigFile(config: LabConfig): string {
  return labKubeconfigPath(config.name);
}

/** The lab's admin credentials per cluster, read back from the lab kubeconfig. */
export async function readLabKubeconfigEntries(config: LabConfig, cluster?: string): Promise<KubeconfigEntry[]> {
  const file = labKubeconfigFile(config);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    throw new NotFoundError(`lab '${config.name}' has no kubeconfig (${file})`, { hint: "run 'ocm-lab up' first" });
  }
  const entries: KubeconfigEntry[] = kubeconfigContexts(text, kubeconfigFileOrigin(file)).map((c) => ({
    name: c.context,
    server: c.server,
    caPem: c.caPem ?? '',
    clientCertPem: c.certPem,
    clientKeyPem: c.keyPem,
    token: c.token,
    ...(c.exec ? { exec: c.exec } : {}),
  }));
  if (cluster === undefined) return entries;
  const found = entries.filter((e) => e.name === cluster);
  if (!found.length) {
    throw new NotFoundError(`lab '${config.name}' has no cluster '${cluster}'`, { hint: `known clusters: ${entries.map((e) => e.name).join(', ')}` });
  }
  return found;
}
