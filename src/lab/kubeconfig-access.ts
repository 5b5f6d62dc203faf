import fs from 'node:fs/promises';
import YAML from 'yaml';
import type { LabConfig } from '../config/index.js';
import { NotFoundError } from '../errors.js';
import type { KubeconfigEntry } from '../kube/kubeconfig.js';
import { labKubeconfigFile as labKubeconfigPath } from '../paths.js';
import { hubAdminKubeconfig } from '../ocm/status.js';

export { hubAdminKubeconfig };

interface KubeconfigFile {
  clusters?: { name: string; cluster: { server: string; 'certificate-authority-data'?: string } }[];
  users?: { name: string; user: { 'client-certificate-data'?: string; 'client-key-data'?: string; token?: string } }[];
}

const unb64 = (s: string | undefined) => (s ? Buffer.from(s, 'base64').toString('utf8') : undefined);

export function labKubeconfigFile(config: LabConfig): string {
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
  const doc = YAML.parse(text) as KubeconfigFile;
  const entries: KubeconfigEntry[] = (doc.clusters ?? []).map((c) => {
    const user = doc.users?.find((u) => u.name === c.name)?.user ?? {};
    return {
      name: c.name,
      server: c.cluster.server,
      caPem: unb64(c.cluster['certificate-authority-data']) ?? '',
      clientCertPem: unb64(user['client-certificate-data']),
      clientKeyPem: unb64(user['client-key-data']),
      token: user.token,
    };
  });
  if (cluster === undefined) return entries;
  const found = entries.filter((e) => e.name === cluster);
  if (!found.length) {
    throw new NotFoundError(`lab '${config.name}' has no cluster '${cluster}'`, { hint: `known clusters: ${entries.map((e) => e.name).join(', ')}` });
  }
  return found;
}
