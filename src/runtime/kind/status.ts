import fs from 'node:fs/promises';
import type { LabConfig } from '../../config/index.js';
import { endpointFromKubeconfig, KubeClient } from '../../kube/client.js';
import { clusterKubeconfigFile, labKubeconfigFile } from '../../paths.js';
import type { ClusterStatus, LabStatus, VpcStatus } from '../types.js';
import { currentEngine } from '../../images/engine/index.js';
import { inspectContainer } from './hub-endpoint.js';
import { hubEndpointName, nodeContainerName, vpcNetworkName } from './names.js';
import { inspectNetworks } from './networks.js';
import { HUB_PUBLISHED_PORTS } from './plan.js';

/** A VPC as kind runs it: its engine's network (the carrier) and the containers attached to it. */
type KindVpcStatus = VpcStatus & { carrier: string; details: { network: string; containers: string[] } };

function isolationReason(lab: string, engine: string): string {
  return `${engine} network isolation; spokes reach the hub only through ${hubEndpointName(lab)} ports ${HUB_PUBLISHED_PORTS.join(', ')}`;
}

/** GET /readyz with the cluster's admin kubeconfig: true when it says ok within `timeoutMs`. */
async function apiReady(kubeconfigFile: string, timeoutMs = 5_000): Promise<boolean> {
  let client: KubeClient | null = null;
  let timer: NodeJS.Timeout | undefined;
  try {
    client = new KubeClient(await endpointFromKubeconfig(kubeconfigFile));
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
    });
    return (await Promise.race([client.getText('/readyz'), timeout])).trim() === 'ok';
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
    client?.close();
  }
}

async function hostServer(kubeconfigFile: string): Promise<string> {
  try {
    return (await endpointFromKubeconfig(kubeconfigFile)).server;
  } catch {
    return '';
  }
}

/** The lab's clusters, networks and isolation as its engine and the API servers report them now. */
export async function kindLabStatus(config: LabConfig): Promise<LabStatus> {
  const lab = config.name;
  const engine = (await currentEngine()).title;
  const endpoint = await inspectContainer(hubEndpointName(lab));
  const clusters: ClusterStatus[] = await Promise.all(
    config.clusters.map(async (c) => {
      const node = await inspectContainer(nodeContainerName(lab, c.name));
      const kubeconfig = clusterKubeconfigFile(lab, c.name);
      const running = !!node?.State.Running;
      const components = [{ name: 'node', running, detail: `container ${nodeContainerName(lab, c.name)}` }];
      if (c.hub) components.push({ name: 'hub-endpoint', running: !!endpoint?.State.Running, detail: `container ${hubEndpointName(lab)}` });
      return { name: c.name, vpc: c.vpc, hub: c.hub, apiServer: await hostServer(kubeconfig), ready: running && (await apiReady(kubeconfig)), components };
    }),
  );
  const networks = await inspectNetworks(config.vpcs.map((v) => vpcNetworkName(lab, v.name)));
  const vpcs: KindVpcStatus[] = config.vpcs.map((v) => {
    const facts = networks.find((n) => n.name === vpcNetworkName(lab, v.name));
    const network = vpcNetworkName(lab, v.name);
    return {
      name: v.name,
      subnet: facts?.subnet ?? null,
      carrier: network,
      details: { network, containers: Object.keys(facts?.containers ?? {}).sort() },
    };
  });
  const missingNetworks = vpcs.filter((v) => !networks.some((n) => n.name === v.carrier)).map((v) => v.carrier);
  const endpointNetworks = Object.keys(endpoint?.NetworkSettings.Networks ?? {});
  const detached = vpcs.filter((v) => !endpointNetworks.includes(v.carrier)).map((v) => v.carrier);
  const isolation = missingNetworks.length
    ? { enforced: false, reason: `${engine} networks missing: ${missingNetworks.join(', ')}` }
    : !endpoint?.State.Running
      ? { enforced: false, reason: `${hubEndpointName(lab)} is not running, so spokes cannot reach the hub` }
      : detached.length
        ? { enforced: false, reason: `${hubEndpointName(lab)} is not on ${detached.join(', ')}` }
        : { enforced: true, reason: isolationReason(lab, engine) };
  const allReady = clusters.length > 0 && clusters.every((c) => c.ready);
  const exists = (await fs.stat(labKubeconfigFile(lab)).catch(() => null)) !== null;
  return {
    lab,
    runtime: 'kind',
    exists,
    kubeconfig: exists ? labKubeconfigFile(lab) : null,
    clusters,
    vpcs,
    isolation,
    // 'pods': the clusters' nodes run pods (here, kind's kubelets).
    capabilities: [...(allReady ? ['control-plane', 'pods'] : []), ...(isolation.enforced ? ['vpc-isolation'] : [])],
  };
}
