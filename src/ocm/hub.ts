import fs from 'node:fs/promises';
import path from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ClusterPlan } from '../lab/plan.js';
import { certificateInfo, isSignedBy, issueCertificate, loadCA, writePublicFile, writeSecretFile, type ClusterPkiPaths } from '../pki/index.js';
import {
  BOOTSTRAP_CLUSTER_ROLE,
  BOOTSTRAP_CLUSTER_ROLE_BINDING,
  BOOTSTRAP_SERVICE_ACCOUNT,
  HUB_BOOTSTRAP_NAMESPACE,
  HUB_CONTROLLER_NAMESPACE,
  PORTS,
  type HubComponent,
} from './constants.js';
import { ensureCrds, hubCrds, HUB_CRD_FILES, readCrds, type ConversionWebhook } from './crds.js';
import { apply, ensureExists, type KubeClients } from './kube.js';
import type { OcmLayout } from './layout.js';
import { hubProcessSpecs, type OcmBinaries } from './processes.js';
import { answers200, ensureProcess } from './supervise.js';

const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;

export function conversionWebhookUrl(hub: ClusterPlan): string {
  return `https://${hub.address}:${PORTS.addonWebhook}/convert`;
}

/**
 * The conversion webhook's serving certificate: issued by the hub CA (which
 * the CRDs' caBundle names) for the hub address the API server dials. Kept
 * while it is still right; controller-runtime reloads a replaced one by itself.
 */
export async function ensureWebhookCertificate(hub: ClusterPlan, pki: ClusterPkiPaths, layout: OcmLayout): Promise<'issued' | 'kept'> {
  const certFile = path.join(layout.webhookCertDir, 'tls.crt');
  const keyFile = path.join(layout.webhookCertDir, 'tls.key');
  const ca = await loadCA(pki.caCert, pki.caKey);
  const current = await fs.readFile(certFile, 'utf8').catch(() => null);
  const keyPresent = await fs.access(keyFile).then(
    () => true,
    () => false,
  );
  if (current && keyPresent) {
    const info = certificateInfo(current);
    if (
      info.ipAddresses.length === 1 &&
      info.ipAddresses[0] === hub.address &&
      info.notAfter.getTime() - Date.now() > RENEW_BEFORE_MS &&
      (await isSignedBy(current, ca.certPem))
    ) {
      return 'kept';
    }
  }
  const pair = await issueCertificate(ca, { commonName: 'ocm-lab addon conversion webhook', ipAddresses: [hub.address], usages: ['server'] });
  await fs.mkdir(layout.webhookCertDir, { recursive: true, mode: 0o700 });
  await writeSecretFile(keyFile, pair.keyPem);
  await writePublicFile(certFile, pair.certPem);
  return 'issued';
}

/** Namespaces, the bootstrap ServiceAccount and what it may do: the identity joining clusters use. */
export function hubBootstrapObjects(): KubernetesObject[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: HUB_BOOTSTRAP_NAMESPACE } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: HUB_CONTROLLER_NAMESPACE } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: BOOTSTRAP_SERVICE_ACCOUNT, namespace: HUB_BOOTSTRAP_NAMESPACE } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: BOOTSTRAP_CLUSTER_ROLE },
      // What a registration agent does before it is accepted: create its ManagedCluster and a CSR, watch both.
      rules: [
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
        { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests'], verbs: ['create', 'get', 'list', 'watch'] },
        { apiGroups: ['cluster.open-cluster-management.io'], resources: ['managedclusters'], verbs: ['get', 'create', 'list', 'watch'] },
        { apiGroups: ['cluster.open-cluster-management.io'], resources: ['managedclustersets/join'], verbs: ['create'] },
      ],
    } as KubernetesObject,
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: BOOTSTRAP_CLUSTER_ROLE_BINDING },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: BOOTSTRAP_CLUSTER_ROLE },
      subjects: [{ kind: 'ServiceAccount', name: BOOTSTRAP_SERVICE_ACCOUNT, namespace: HUB_BOOTSTRAP_NAMESPACE }],
    } as KubernetesObject,
  ];
}

export async function ensureHubBootstrapObjects(clients: KubeClients): Promise<number> {
  let created = 0;
  for (const object of hubBootstrapObjects()) {
    // Namespaces and the ServiceAccount are only created; RBAC is converged (a changed rule set is corrected).
    if (object.kind === 'ClusterRole' || object.kind === 'ClusterRoleBinding') await apply(clients, object);
    else if ((await ensureExists(clients, object)) === 'created') created += 1;
  }
  return created;
}

export async function installHubCrds(clients: KubeClients, apiModuleDir: string, webhook: ConversionWebhook): Promise<{ applied: string[]; kept: string[] }> {
  return ensureCrds(clients, hubCrds(await readCrds(apiModuleDir, HUB_CRD_FILES), webhook));
}

function readinessUrl(hub: ClusterPlan, component: HubComponent): string {
  switch (component) {
    case 'addon-webhook':
      return `http://${hub.address}:${PORTS.addonWebhookHealth}/readyz`;
    case 'registration-controller':
      return `https://${hub.address}:${PORTS.registrationController}/healthz`;
    case 'addon-manager':
      return `https://${hub.address}:${PORTS.addonManager}/healthz`;
    case 'placement-controller':
      return `https://${hub.address}:${PORTS.placementController}/healthz`;
  }
}

/**
 * Starts whichever of `components` are not running, side by side, each awaited
 * until its health endpoint answers. Returns the names it started.
 */
export async function ensureHubProcesses(
  hub: ClusterPlan,
  binaries: OcmBinaries,
  layout: OcmLayout,
  components: readonly HubComponent[],
  options: { timeoutMs: number; progress?: (line: string) => void },
): Promise<string[]> {
  const specs = hubProcessSpecs(hub, binaries, layout);
  const results = await Promise.all(
    components.map(async (component) => ((await ensureProcess(specs[component], () => answers200(readinessUrl(hub, component)), options)) === 'started' ? component : null)),
  );
  return results.filter((c): c is HubComponent => c !== null);
}
