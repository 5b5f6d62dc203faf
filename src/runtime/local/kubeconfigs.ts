import fs from 'node:fs/promises';
import path from 'node:path';
import type { ClusterPlan } from './plan.js';
import type { ClusterPkiPaths } from '../../pki/index.js';
import { writeKubeconfig, type KubeconfigEntry } from '../../kube/kubeconfig.js';
import { controllerManagerKubeconfigPath } from './controlplane.js';

export function labKubeconfigPath(labDirectory: string): string {
  return path.join(labDirectory, 'kubeconfig');
}

export function adminKubeconfigPath(cluster: ClusterPlan): string {
  return path.join(cluster.kubeconfigDir, 'admin.kubeconfig');
}

async function entryFor(cluster: ClusterPlan, certFile: string, keyFile: string, caFile: string): Promise<KubeconfigEntry> {
  const [caPem, clientCertPem, clientKeyPem] = await Promise.all([fs.readFile(caFile, 'utf8'), fs.readFile(certFile, 'utf8'), fs.readFile(keyFile, 'utf8')]);
  return { name: cluster.name, server: cluster.apiServerUrl, caPem, clientCertPem, clientKeyPem };
}

async function adminEntry(cluster: ClusterPlan, pki: ClusterPkiPaths): Promise<KubeconfigEntry> {
  return entryFor(cluster, pki.adminCert, pki.adminKey, pki.caCert);
}

/** The per-cluster kubeconfigs the control-plane components and tools use. */
export async function writeClusterKubeconfigs(cluster: ClusterPlan, pki: ClusterPkiPaths): Promise<void> {
  await writeKubeconfig(adminKubeconfigPath(cluster), [await adminEntry(cluster, pki)]);
  await writeKubeconfig(controllerManagerKubeconfigPath(cluster), [await entryFor(cluster, pki.controllerManagerCert, pki.controllerManagerKey, pki.caCert)]);
}

/** One kubeconfig for the whole lab, contexts named after the clusters; the hub is the current context. */
export async function writeLabKubeconfig(labDirectory: string, clusters: readonly ClusterPlan[], pki: ReadonlyMap<string, ClusterPkiPaths>): Promise<void> {
  const entries = await Promise.all(clusters.map((c) => adminEntry(c, pki.get(c.name)!)));
  const hub = clusters.find((c) => c.hub)?.name;
  await writeKubeconfig(labKubeconfigPath(labDirectory), entries, hub);
}
