import type { KubeClient } from '../../kube/client.js';
import { addonInstall } from '../placements.js';
import { isStatus } from '../../kube/client.js';
import { applyObject, collectionPath, deleteIfPresent, getOrNull, objectPath, setCondition, type Condition, type KubeObject } from '../../kube/objects.js';
import type { AddonDefinition } from '../framework/types.js';
import { AddonConfigError } from '../framework/deployment-config.js';
import crypto from 'node:crypto';
import { canonicalIp, isDnsName } from '../../pki/names.js';
import { readTlsProfile, tlsProfileArgs } from '../../tunnel/tls-profile.js';
import { ADDON_MANAGER_NAMESPACE, CLUSTER_API } from '../framework/names.js';
import { ensureCaSecret, ensureCertificateSecret, ensureSignerCA, proxyServerNames } from './certificates.js';
import {
  additionalSANs,
  agentDialAddress,
  defaultProxyConfiguration,
  entrypointSpec,
  loadBalancerAddress,
  proxyConfigurationPath,
  readProxyConfiguration,
  userServerAdditionalSANs,
  userServerEnabled,
  type EntrypointSpec,
  type EntrypointType,
  type ManagedProxyConfiguration,
} from './configuration.js';
import { agentCertificateSecretName, CLUSTER_PROXY, PROXY_API, PROXY_NAMESPACE, SECRETS } from './constants.js';
import { ENTRYPOINT_LABEL, entrypointService, loadBalancerService, portForwardRbac, proxyAgentManifests, proxyServerDeployment } from './manifests.js';
import { SERVICE_PROXY_NAMES, userServerDeployment, userServerNames, userServerService } from './user-server-manifests.js';
import type { CertificateAuthority } from '../../pki/index.js';
import { namespace } from '../../kube/builders.js';

export interface ClusterProxyOptions {
  /** The hub address the spokes' agents dial; the default ManagedProxyConfiguration's Hostname entrypoint. */
  entrypointHost: string;
  /** The entrypoint type of the ManagedProxyConfiguration the manager creates when there is none (default Hostname). */
  entrypointType?: EntrypointType;
}

async function ensureNamespace(hub: KubeClient, name: string): Promise<void> {
  await hub.post('/api/v1/namespaces', namespace(name)).catch((err: unknown) => {
    if (!isStatus(err, 409)) throw err;
  });
}

/**
 * The cluster's ManagedCluster as the owner of its agent's certificate Secret on the hub: the Secret
 * lives outside the cluster's namespace, so it goes by garbage collection when the cluster is deregistered.
 */
async function managedClusterOwner(hub: KubeClient, cluster: string): Promise<NonNullable<KubeObject['metadata']['ownerReferences']>[number]> {
  const mc = await hub.get<KubeObject>(objectPath({ apiVersion: CLUSTER_API, kind: 'ManagedCluster', metadata: { name: cluster } }));
  return { apiVersion: CLUSTER_API, kind: 'ManagedCluster', name: cluster, uid: mc.metadata.uid ?? '' };
}

/** The ManagedProxyConfiguration, created with the lab's defaults when missing (a user's edits are kept). */
async function ensureProxyConfiguration(hub: KubeClient, options: ClusterProxyOptions): Promise<ManagedProxyConfiguration> {
  const existing = await readProxyConfiguration(hub);
  if (existing) return existing;
  return hub.post<ManagedProxyConfiguration>(
    collectionPath(PROXY_API, 'ManagedProxyConfiguration'),
    defaultProxyConfiguration(options.entrypointHost, options.entrypointType),
  );
}

/** The entrypoint's LoadBalancer Service (the first ingress address, or null while it has none). */
async function readLoadBalancer(hub: KubeClient, ep: Extract<EntrypointSpec, { type: 'LoadBalancerService' }>): Promise<string | null> {
  return loadBalancerAddress(await getOrNull<KubeObject>(hub, objectPath(loadBalancerService(ep))));
}

/**
 * The hub side of the entrypoint: the LoadBalancer Service (LoadBalancerService) or the agents' port-forward
 * permission (PortForward), and the removal of those another type left behind. Returns the EntrypointReady
 * condition and, for LoadBalancerService, the address the load balancer was given.
 */
async function reconcileEntrypoint(hub: KubeClient, ep: EntrypointSpec, issues: string[]): Promise<{ condition: Condition; address: string | null }> {
  const wanted = ep.type === 'LoadBalancerService' ? [loadBalancerService(ep)] : ep.type === 'PortForward' ? portForwardRbac() : [];
  for (const obj of wanted) await applyObject(hub, obj).catch((err: unknown) => issues.push(`${obj.kind} ${obj.metadata.name}: ${(err as Error).message}`));
  const address = ep.type === 'LoadBalancerService' ? await readLoadBalancer(hub, ep) : null;
  if (ep.type !== 'LoadBalancerService' || address) await removeOtherEntrypoints(hub, wanted, issues);
  if (ep.type !== 'LoadBalancerService') {
    const message = ep.type === 'Hostname' ? `agents dial ${ep.host}:${ep.port}` : `agents port-forward through the hub's API server to the proxy-server pods`;
    return { condition: { type: 'EntrypointReady', status: 'True', reason: ep.type, message }, address: null };
  }
  return {
    address,
    condition: address
      ? { type: 'EntrypointReady', status: 'True', reason: 'LoadBalancerProvisioned', message: `agents dial ${address}:${ep.port}` }
      : { type: 'EntrypointReady', status: 'False', reason: 'LoadBalancerPending', message: loadBalancerPending(ep) },
  };
}

/**
 * The objects an earlier entrypoint type left (by their label), once the new one is usable: until then the
 * agents keep dialling the old one (a PortForward agent still needs its permission).
 */
async function removeOtherEntrypoints(hub: KubeClient, wanted: KubeObject[], issues: string[]): Promise<void> {
  for (const kind of [
    ['v1', 'Service'],
    ['rbac.authorization.k8s.io/v1', 'Role'],
    ['rbac.authorization.k8s.io/v1', 'RoleBinding'],
  ] as const) {
    const list = await hub
      .get<{ items: KubeObject[] }>(collectionPath(kind[0], kind[1], PROXY_NAMESPACE), { labelSelector: ENTRYPOINT_LABEL })
      .catch(() => ({ items: [] }));
    for (const obj of list.items.filter((o) => !wanted.some((w) => w.kind === kind[1] && w.metadata.name === o.metadata.name)))
      await deleteIfPresent(hub, objectPath({ ...obj, apiVersion: kind[0], kind: kind[1] })).catch((err: unknown) =>
        issues.push(`removing ${kind[1]} ${obj.metadata.name}: ${(err as Error).message}`),
      );
  }
}

/** reconcileHub's part for the entrypoint: its condition and the address agents dial (the certificates name it); a bad spec is an issue. */
async function hubEntrypoint(hub: KubeClient, mpc: ManagedProxyConfiguration, issues: string[]): Promise<{ condition?: Condition; dialHost: string | null }> {
  try {
    const ep = entrypointSpec(mpc);
    const { condition, address } = await reconcileEntrypoint(hub, ep, issues);
    return { condition, dialHost: agentDialAddress(ep, address)?.host ?? null };
  } catch (err) {
    issues.push((err as Error).message);
    return { dialHost: null };
  }
}

const loadBalancerPending = (ep: Extract<EntrypointSpec, { type: 'LoadBalancerService' }>) =>
  `Service ${PROXY_NAMESPACE}/${ep.serviceName} of type LoadBalancer has no status.loadBalancer.ingress yet ` +
  '(no load balancer controller has given it an address); the agents wait for one, or choose entrypoint type Hostname or PortForward';

/** additionalSANs split into usable names and the ones that are neither a hostname nor an IP address. */
function checkedAdditionalSANs(sans: string[]): { usable: string[]; rejected: string[] } {
  const names = sans.map((s) => s.trim()).filter(Boolean);
  const ok = (n: string) => !!canonicalIp(n) || isDnsName(n);
  return { usable: names.filter(ok), rejected: names.filter((n) => !ok(n)) };
}

/**
 * The proxy-server's TLS flags from `ocm-tls-profile` in the manager's namespace (where
 * upstream's manager reads it). A malformed ConfigMap is reported and the last good
 * flags stay; with none known yet (a manager just started) null: leave the Deployment
 * as it is rather than roll it to a weaker default.
 */
async function proxyServerTlsArgs(hub: KubeClient, issues: string[], lastGood: { args: string[] | null }): Promise<string[] | null> {
  try {
    lastGood.args = tlsProfileArgs(await readTlsProfile(hub, ADDON_MANAGER_NAMESPACE));
  } catch (err) {
    issues.push(`ConfigMap ${ADDON_MANAGER_NAMESPACE}/ocm-tls-profile: ${(err as Error).message}`);
  }
  return lastGood.args;
}

const digest = (...pems: string[]) => crypto.createHash('sha256').update(pems.join('\n')).digest('hex').slice(0, 16);

/**
 * With `spec.userServer`: the user server's certificate (names as upstream's plus
 * `spec.userServer.additionalSANs`), the service proxies' certificate, Service and Deployment
 * `cluster-proxy-addon-user`. Without: the Deployment and Service go. Returns whether the
 * user server's certificate is in place (for the UserServerSecretSigned condition).
 */
async function reconcileUserServer(
  hub: KubeClient,
  mpc: ManagedProxyConfiguration,
  ca: CertificateAuthority,
  tlsArgs: string[] | null,
  issues: string[],
): Promise<boolean> {
  const objects = [userServerService(), userServerDeployment(mpc, { tlsArgs: [], certificateDigest: '' })];
  if (!userServerEnabled(mpc)) {
    for (const obj of objects)
      await hub.delete(objectPath(obj)).catch((err: unknown) => {
        if (!isStatus(err, 404)) issues.push(`removing ${obj.kind} ${obj.metadata.name}: ${(err as Error).message}`);
      });
    return false;
  }
  const sans = checkedAdditionalSANs(userServerAdditionalSANs(mpc));
  if (sans.rejected.length)
    issues.push(
      `spec.userServer.additionalSANs: ${sans.rejected.map((n) => JSON.stringify(n)).join(', ')} ` +
        "is neither a hostname nor an IP address (left out of the user server's certificate)",
    );
  const serving = await ensureCertificateSecret(hub, ca, PROXY_NAMESPACE, SECRETS.userServing, {
    commonName: 'cluster-proxy-addon-user',
    usages: ['server'],
    ...userServerNames(sans.usable),
  });
  await ensureCertificateSecret(hub, ca, PROXY_NAMESPACE, SECRETS.serviceProxyServer, {
    commonName: 'cluster-proxy-service-proxy',
    usages: ['server'],
    ...SERVICE_PROXY_NAMES,
  });
  // The Service first: the pod's /etc/hosts names the Services that exist when it starts.
  const apply = [userServerService(), ...(tlsArgs ? [userServerDeployment(mpc, { tlsArgs, certificateDigest: digest(serving.certPem) })] : [])];
  for (const obj of apply) await applyObject(hub, obj).catch((err: unknown) => issues.push(`${obj.kind} ${obj.metadata.name}: ${(err as Error).message}`));
  return true;
}

async function reportProxyConfiguration(
  hub: KubeClient,
  mpc: ManagedProxyConfiguration,
  issues: string[],
  userServer: boolean,
  entrypoint: Condition | undefined,
): Promise<void> {
  const conditions: Condition[] = [...(mpc.status?.conditions ?? [])];
  const ok = issues.length === 0;
  let changed = entrypoint ? setCondition(conditions, entrypoint) : false;
  changed =
    setCondition(
      conditions,
      ok
        ? { type: 'ProxyServerDeployed', status: 'True', reason: 'Deployed', message: 'proxy-server Deployment and Service are applied' }
        : { type: 'ProxyServerDeployed', status: 'False', reason: 'Failed', message: issues.join('; ') },
    ) || changed;
  changed =
    setCondition(conditions, {
      type: 'ProxyServerSecretSigned',
      status: 'True',
      reason: 'SelfSigned',
      message: `${SECRETS.proxyServer} is signed by ${SECRETS.signer}`,
    }) || changed;
  changed =
    setCondition(conditions, {
      type: 'AgentServerSecretSigned',
      status: 'True',
      reason: 'SelfSigned',
      message: `${SECRETS.agentServer} is signed by ${SECRETS.signer}`,
    }) || changed;
  if (userServer)
    changed =
      setCondition(conditions, {
        type: 'UserServerSecretSigned',
        status: 'True',
        reason: 'SelfSigned',
        message: `${SECRETS.userServing} is signed by ${SECRETS.signer}`,
      }) || changed;
  if (changed) await hub.put(`${proxyConfigurationPath()}/status`, { ...mpc, status: { ...mpc.status, conditions } }).catch(() => undefined);
}

/**
 * cluster-proxy on the addon framework: the hub side (signer CA, the proxy-server's
 * secrets, Deployment and Service from the ManagedProxyConfiguration) on every pass,
 * and per cluster an agent that opens the tunnel outwards to the Hostname entrypoint.
 */
export function clusterProxyAddon(options: ClusterProxyOptions): AddonDefinition {
  const tls: { args: string[] | null } = { args: null };
  return {
    name: CLUSTER_PROXY,
    displayName: 'cluster-proxy',
    description: 'reverse tunnels from the hub to the managed clusters (apiserver-network-proxy wire protocol)',
    installNamespace: PROXY_NAMESPACE,
    // Upstream's chart default: by Placement (its builtin.ts; the Placement from src/addons/placements.ts).
    install: addonInstall(CLUSTER_PROXY),
    // As upstream's chart values: the agent follows agentInstallNamespace (its own namespace when
    // empty), proxy variables (upper case) go to the proxy-agent container only.
    deploymentConfigUse: {
      installNamespace: 'follow',
      nodePlacement: 'apply',
      proxyConfig: 'env',
      proxyContainers: ['proxy-agent'],
      resourceRequirements: 'apply',
    },
    healthCheck: 'DeploymentAvailability',
    // A hub identity (Secret cluster-proxy-hub-kubeconfig, as upstream's agent has): the service
    // proxy checks hub users' tokens with it. TokenReview is cluster-scoped: its ClusterRole is
    // bound to the addon's agent group at install (USER_TOKEN_REVIEW_ROLE), not here.
    hubPermissions: [],
    async reconcileHub(hub) {
      await ensureNamespace(hub, PROXY_NAMESPACE);
      const mpc = await ensureProxyConfiguration(hub, options);
      const ca = await ensureSignerCA(hub);
      await ensureCaSecret(hub, ca);
      const issues: string[] = [];
      const sans = checkedAdditionalSANs(additionalSANs(mpc));
      if (sans.rejected.length)
        issues.push(
          `spec.authentication.signer.selfSigned.additionalSANs: ${sans.rejected.map((n) => JSON.stringify(n)).join(', ')} ` +
            'is neither a hostname nor an IP address (left out of the certificates)',
        );
      const entrypoint = await hubEntrypoint(hub, mpc, issues);
      const names = proxyServerNames(entrypoint.dialHost, sans.usable);
      const proxyServer = await ensureCertificateSecret(hub, ca, PROXY_NAMESPACE, SECRETS.proxyServer, {
        commonName: 'proxy-server',
        usages: ['server'],
        ...names,
      });
      const agentServer = await ensureCertificateSecret(hub, ca, PROXY_NAMESPACE, SECRETS.agentServer, {
        commonName: 'agent-server',
        usages: ['server'],
        ...names,
      });
      await ensureCertificateSecret(hub, ca, PROXY_NAMESPACE, SECRETS.proxyClient, { commonName: 'proxy-client', usages: ['client'] });
      const tlsArgs = await proxyServerTlsArgs(hub, issues, tls);
      const rollout = { tlsArgs: tlsArgs ?? [], certificatesDigest: digest(proxyServer.certPem, agentServer.certPem) };
      for (const obj of [...(tlsArgs ? [proxyServerDeployment(mpc, rollout)] : []), entrypointService()]) {
        await applyObject(hub, obj).catch((err: unknown) => issues.push(`${obj.kind} ${obj.metadata.name}: ${(err as Error).message}`));
      }
      const userServer = await reconcileUserServer(hub, mpc, ca, tlsArgs, issues);
      await reportProxyConfiguration(hub, mpc, issues, userServer, entrypoint.condition);
    },
    async agentManifests(cluster, hub, values) {
      const mpc = await readProxyConfiguration(hub);
      if (!mpc) throw new Error('ManagedProxyConfiguration cluster-proxy does not exist yet');
      let ep: EntrypointSpec;
      try {
        ep = entrypointSpec(mpc);
      } catch (err) {
        throw new AddonConfigError((err as Error).message, 'EntrypointNotValid');
      }
      // Until the load balancer has an address the agents stay as they were (none yet on a new cluster); the Configured condition says why.
      const loadBalancer = ep.type === 'LoadBalancerService' ? await readLoadBalancer(hub, ep) : null;
      if (ep.type === 'LoadBalancerService' && !loadBalancer) throw new AddonConfigError(loadBalancerPending(ep), 'EntrypointNotReady');
      // AddOnDeploymentConfig variable `replicas` (upstream's chart value of that name): the agent's replicas on this cluster.
      const replicas = values?.variables.replicas;
      if (replicas !== undefined && !/^[1-9][0-9]?$/.test(replicas))
        throw new AddonConfigError(`customizedVariables replicas=${JSON.stringify(replicas)} is not a whole number from 1 to 99`);
      const effective = replicas ? { ...mpc, spec: { ...mpc.spec, proxyAgent: { ...mpc.spec.proxyAgent, replicas: Number(replicas) } } } : mpc;
      const ca = await ensureSignerCA(hub);
      const cert = await ensureCertificateSecret(
        hub,
        ca,
        PROXY_NAMESPACE,
        agentCertificateSecretName(cluster),
        { commonName: `cluster-proxy-agent:${cluster}`, usages: ['client'] },
        {},
        await managedClusterOwner(hub, cluster),
      );
      if (!userServerEnabled(mpc)) return proxyAgentManifests(cluster, effective, cert, ca.certPem, undefined, loadBalancer);
      const serviceProxyCert = await ensureCertificateSecret(hub, ca, PROXY_NAMESPACE, SECRETS.serviceProxyServer, {
        commonName: 'cluster-proxy-service-proxy',
        usages: ['server'],
        ...SERVICE_PROXY_NAMES,
      });
      const issues: string[] = [];
      const tlsArgs = await proxyServerTlsArgs(hub, issues, tls);
      if (!tlsArgs) throw new Error(`the service proxy's TLS settings are unknown: ${issues.join('; ')}; fix or delete that ConfigMap`);
      return proxyAgentManifests(
        cluster,
        effective,
        cert,
        ca.certPem,
        {
          cert: serviceProxyCert,
          tlsArgs,
          agentNamespace: values?.installNamespace ?? PROXY_NAMESPACE,
        },
        loadBalancer,
      );
    },
  };
}
