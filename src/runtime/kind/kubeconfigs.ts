import YAML from 'yaml';
import { writeKubeconfig, type KubeconfigEntry } from '../../kube/kubeconfig.js';
import { clusterKubeconfigFile, labKubeconfigFile } from '../../paths.js';

const unb64 = (text: string) => Buffer.from(text, 'base64').toString('utf8');

interface RawKubeconfig {
  'current-context'?: string;
  contexts?: { name: string; context: { cluster: string; user: string } }[];
  clusters?: { name: string; cluster: { server?: string; 'certificate-authority-data'?: string } }[];
  users?: { name: string; user: { 'client-certificate-data'?: string; 'client-key-data'?: string; token?: string } }[];
}

/**
 * The one context of a kubeconfig kind printed (`kind-<kind name>`), renamed
 * to the lab cluster's name: kind's own names would differ from every other runtime's.
 */
export function entryFromKindKubeconfig(text: string, clusterName: string): KubeconfigEntry {
  const doc = YAML.parse(text) as RawKubeconfig;
  const contextName = doc['current-context'] ?? doc.contexts?.[0]?.name;
  const context = doc.contexts?.find((c) => c.name === contextName)?.context;
  const cluster = doc.clusters?.find((c) => c.name === context?.cluster)?.cluster;
  const user = doc.users?.find((u) => u.name === context?.user)?.user;
  if (!context || !cluster?.server || !cluster['certificate-authority-data'] || !user) {
    throw new Error(`kind printed a kubeconfig for ${clusterName} without a complete current context (context ${String(contextName)})`);
  }
  const entry: KubeconfigEntry = { name: clusterName, server: cluster.server, caPem: unb64(cluster['certificate-authority-data']) };
  if (user['client-certificate-data']) entry.clientCertPem = unb64(user['client-certificate-data']);
  if (user['client-key-data']) entry.clientKeyPem = unb64(user['client-key-data']);
  if (user.token) entry.token = user.token;
  return entry;
}

/** Each cluster's admin kubeconfig and the lab's, where every runtime writes them (0600); the hub is current. */
export async function writeLabKubeconfigs(lab: string, entries: readonly KubeconfigEntry[], hub: string): Promise<void> {
  await Promise.all(entries.map((e) => writeKubeconfig(clusterKubeconfigFile(lab, e.name), [e])));
  await writeKubeconfig(labKubeconfigFile(lab), entries, hub);
}
