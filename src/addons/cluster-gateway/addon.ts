import type { KubeClient } from '../../kube/client.js';
import { probeCluster } from '../cluster-proxy/health.js';
import { CLUSTER_API } from '../framework/names.js';
import { applyObject, collectionPath, deleteIfPresent, getOrNull, type Condition, type KubeObject } from '../../kube/objects.js';
import type { AddonDefinition } from '../framework/types.js';
import { AddonConfigError } from '../framework/deployment-config.js';
import { MSA_API } from '../managed-serviceaccount/constants.js';
import {
  CLUSTER_GATEWAY,
  CREDENTIAL_TYPE_LABEL,
  CREDENTIALS_NAMESPACE,
  ENDPOINT_TYPE_LABEL,
  GATEWAY_MSA,
  GATEWAY_NAMESPACE,
  HEALTHY_ANNOTATION,
  HEALTHY_REASON_ANNOTATION,
  MANAGED_BY_LABEL,
} from './constants.js';
import { TunnelSource } from './tunnel-source.js';

interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

const MANAGED_BY = 'cluster-gateway-addon';

/** The ManagedServiceAccount whose token the gateway uses on one cluster. */
function gatewayMsa(cluster: string): KubeObject {
  return { apiVersion: MSA_API, kind: 'ManagedServiceAccount', metadata: { name: GATEWAY_MSA, namespace: cluster }, spec: { rotation: { enabled: true } } };
}

/** The credentials Secret for one cluster in addon mode: the MSA's token, through cluster-proxy. */
export function credentialSecret(cluster: string, token: Secret, existing: Secret | null): Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: {
      ...(existing?.metadata ?? {}),
      name: cluster,
      namespace: CREDENTIALS_NAMESPACE,
      labels: {
        ...existing?.metadata.labels,
        [CREDENTIAL_TYPE_LABEL]: 'ServiceAccountToken',
        [ENDPOINT_TYPE_LABEL]: 'ClusterProxy',
        [MANAGED_BY_LABEL]: MANAGED_BY,
      },
    },
    data: { token: token.data?.token ?? '', 'ca.crt': token.data?.['ca.crt'] ?? '' },
  };
}

export interface ProbeResult {
  healthy: boolean;
  reason: string;
}

/** Health as annotations on the credentials Secret (upstream keeps it there too); null when nothing changes. */
export function healthAnnotationPatch(secret: Secret, probe: ProbeResult): Record<string, unknown> | null {
  const a = secret.metadata.annotations ?? {};
  const healthy = String(probe.healthy);
  const reason = probe.healthy ? undefined : probe.reason;
  if (a[HEALTHY_ANNOTATION] === healthy && a[HEALTHY_REASON_ANNOTATION] === reason) return null;
  return { metadata: { annotations: { [HEALTHY_ANNOTATION]: healthy, [HEALTHY_REASON_ANNOTATION]: reason ?? null } } };
}

export function availableCondition(cluster: string, probe: ProbeResult | undefined): Condition | null {
  if (!probe)
    return {
      type: 'Available',
      status: 'Unknown',
      reason: 'NoCredential',
      message: `no ClusterGateway ${cluster} yet: waiting for the token of ManagedServiceAccount ${cluster}/${GATEWAY_MSA}`,
    };
  return probe.healthy
    ? { type: 'Available', status: 'True', reason: 'ProbeSucceeded', message: `GET /healthz on ${cluster} through cluster-proxy answered ok` }
    : { type: 'Available', status: 'False', reason: 'ProbeFailed', message: `GET /healthz on ${cluster} through cluster-proxy: ${probe.reason}` };
}

/**
 * cluster-gateway's addon mode (seed 001): per accepted cluster a ManagedServiceAccount
 * `cluster-gateway`, its token copied into the credentials namespace as Secret `<cluster>`
 * (ServiceAccountToken, ClusterProxy); Secrets it made for clusters that are gone are
 * deleted; each cluster's /healthz is probed through the tunnel every pass and becomes
 * the gateway's health and the addon's Available. Nothing runs on the clusters.
 */
export function clusterGatewayAddon(log: (line: string) => void = () => undefined): AddonDefinition {
  const probes = new Map<string, ProbeResult>();
  // Per cluster, from its AddOnDeploymentConfig variable `probeTimeout` (nothing of the gateway runs on the clusters).
  const probeTimeouts = new Map<string, number>();
  let tunnel: TunnelSource | undefined;
  return {
    name: CLUSTER_GATEWAY,
    displayName: 'cluster-gateway',
    description: 'an aggregated API (cluster.core.oam.dev) that proxies Kubernetes API requests into the managed clusters',
    installNamespace: GATEWAY_NAMESPACE,
    healthCheck: 'Customized',
    async agentManifests(cluster, _hub, values) {
      const timeout = values?.variables.probeTimeout;
      if (timeout !== undefined && !/^[0-9]+(ms|s)$/.test(timeout))
        throw new AddonConfigError(`customizedVariables probeTimeout=${JSON.stringify(timeout)} is not a duration such as 800ms or 5s`);
      if (timeout === undefined) probeTimeouts.delete(cluster);
      else probeTimeouts.set(cluster, timeout.endsWith('ms') ? Number(timeout.slice(0, -2)) : Number(timeout.slice(0, -1)) * 1000);
      return [];
    },
    async clusterAvailability(cluster) {
      return availableCondition(cluster, probes.get(cluster));
    },
    async reconcileHub(hub: KubeClient) {
      tunnel ??= new TunnelSource(hub, log);
      const clusters = (
        await hub.get<{ items: (KubeObject & { spec?: { hubAcceptsClient?: boolean } })[] }>(collectionPath(CLUSTER_API, 'ManagedCluster'))
      ).items
        .filter((c) => c.spec?.hubAcceptsClient && !c.metadata.deletionTimestamp)
        .map((c) => c.metadata.name);
      const secrets = (await hub.get<{ items: Secret[] }>(`/api/v1/namespaces/${CREDENTIALS_NAMESPACE}/secrets`)).items;
      for (const s of secrets) {
        if (s.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY && !clusters.includes(s.metadata.name)) {
          if (await deleteIfPresent(hub, `/api/v1/namespaces/${CREDENTIALS_NAMESPACE}/secrets/${s.metadata.name}`))
            log(`deleted Secret ${CREDENTIALS_NAMESPACE}/${s.metadata.name}: cluster ${s.metadata.name} is gone`);
          probes.delete(s.metadata.name);
        }
      }
      for (const cluster of clusters) {
        try {
          const r = await applyObject(hub, gatewayMsa(cluster));
          if (r !== 'unchanged') log(`ManagedServiceAccount ${cluster}/${GATEWAY_MSA} ${r}`);
          const token = await getOrNull<Secret>(hub, `/api/v1/namespaces/${cluster}/secrets/${GATEWAY_MSA}`);
          const existing = secrets.find((s) => s.metadata.name === cluster) ?? null;
          if (!token?.data?.token) continue;
          let current = existing;
          const desired = credentialSecret(cluster, token, existing);
          if (!existing) {
            current = await hub.post<Secret>(`/api/v1/namespaces/${CREDENTIALS_NAMESPACE}/secrets`, desired);
            log(`Secret ${CREDENTIALS_NAMESPACE}/${cluster} created from the token of ManagedServiceAccount ${cluster}/${GATEWAY_MSA}`);
          } else if (
            JSON.stringify(existing.data) !== JSON.stringify(desired.data) ||
            JSON.stringify(existing.metadata.labels) !== JSON.stringify(desired.metadata.labels)
          ) {
            current = await hub.put<Secret>(`/api/v1/namespaces/${CREDENTIALS_NAMESPACE}/secrets/${cluster}`, desired);
            log(`Secret ${CREDENTIALS_NAMESPACE}/${cluster} updated (token refreshed)`);
          }
          const probe = await probeCluster(await tunnel.get(), cluster, probeTimeouts.get(cluster) ?? 5_000).catch((err: Error) => ({
            ok: false,
            error: err.message,
          }));
          const result = { healthy: probe.ok, reason: probe.ok ? '' : (probe.error ?? 'no answer') };
          probes.set(cluster, result);
          if (/proxy stream failed|closed the stream/.test(result.reason)) tunnel.invalidate();
          const patch = current ? healthAnnotationPatch(current, result) : null;
          if (patch) await hub.mergePatch(`/api/v1/namespaces/${CREDENTIALS_NAMESPACE}/secrets/${cluster}`, patch);
        } catch (err) {
          log(`${cluster}: ${(err as Error).message}`);
          if (/tunnel|proxy-server/.test((err as Error).message)) tunnel.invalidate();
        }
      }
    },
  };
}
