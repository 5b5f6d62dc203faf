import { kubeconfigContext, writeKubeconfig, type KubeconfigContext, type KubeconfigEntry } from '../../kube/kubeconfig.js';
import { clusterKubeconfigFile, labKubeconfigFile } from '../../paths.js';

/**
 * The one context of a kubeconfig kind printed (`kind-<kind name>`), renamed
 * to the lab cluster's name: kind's own names would differ from every other runtime's.
 */
export function entryFromKindKubeconfig(text: string, clusterName: string): KubeconfigEntry {
  const incomplete = (why: string) => new Error(`kind printed a kubeconfig for ${clusterName} without a complete current context (${why})`);
  let ctx: KubeconfigContext;
  try {
    ctx = kubeconfigContext(text, { source: `kind's kubeconfig for ${clusterName}`, dir: process.cwd() });
  } catch (err) {
    throw incomplete((err as Error).message);
  }
  if (!ctx.caPem) throw incomplete(`context ${ctx.context} has no certificate-authority-data`);
  const entry: KubeconfigEntry = { name: clusterName, server: ctx.server, caPem: ctx.caPem };
  if (ctx.certPem) entry.clientCertPem = ctx.certPem;
  if (ctx.keyPem) entry.clientKeyPem = ctx.keyPem;
  if (ctx.token) entry.token = ctx.token;
  return entry;
}

/** Each cluster's admin kubeconfig and the lab's, where every runtime writes them (0600); the hub is current. */
export async function writeLabKubeconfigs(lab: string, entries: readonly KubeconfigEntry[], hub: string): Promise<void> {
  await Promise.all(entries.map((e) => writeKubeconfig(clusterKubeconfigFile(lab, e.name), [e])));
  await writeKubeconfig(labKubeconfigFile(lab), entries, hub);
}
