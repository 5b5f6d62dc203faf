import path from 'node:path';
import type { ClusterPlan } from '../lab/plan.js';
import type { ProcessSpec } from '../runtime/local/process.js';
import { AGENT_NAMESPACE, HUB_CONTROLLER_NAMESPACE, HUB_KUBECONFIG_SECRET, KLUSTERLET_COMPONENT, PORTS, type HubComponent } from './constants.js';
import type { OcmLayout } from './layout.js';

export interface OcmBinaries {
  'registration-operator': string;
  registration: string;
  placement: string;
  addon: string;
}

function files(cluster: ClusterPlan, name: string): Pick<ProcessSpec, 'pidFile' | 'logFile'> {
  return { pidFile: path.join(cluster.runDir, `${name}.pid`), logFile: path.join(cluster.logDir, `${name}.log`) };
}

function env(layout: OcmLayout, component: string): NodeJS.ProcessEnv {
  return { ...process.env, TMPDIR: layout.tmpDir(component), KUBECONFIG: layout.adminKubeconfig };
}

/**
 * Flags every library-go controller needs outside a pod: a kubeconfig (the
 * default is in-cluster), a namespace for events (the default is read from a
 * pod's service-account mount), no leader election (one replica; a restarted
 * process would otherwise wait out the old lease, 137 s by default), and a
 * health/metrics address of its own (the default 0.0.0.0:8443 clashes).
 */
function controllerFlags(cluster: ClusterPlan, layout: OcmLayout, namespace: string, port: number): string[] {
  return [`--kubeconfig=${layout.adminKubeconfig}`, `--namespace=${namespace}`, '--disable-leader-election', `--listen=${cluster.address}:${port}`, '--v=1'];
}

/** The hub's OCM processes, in start order. */
export function hubProcessSpecs(hub: ClusterPlan, binaries: OcmBinaries, layout: OcmLayout): Record<HubComponent, ProcessSpec> {
  const spec = (name: HubComponent, binary: string, args: string[]): ProcessSpec => ({
    name,
    binary,
    args,
    prefix: hub.netnsPrefix,
    ...files(hub, name),
    env: env(layout, name),
  });
  return {
    // Serves /convert on every address of the hub's namespace (controller-runtime cannot bind one address).
    'addon-webhook': spec('addon-webhook', binaries.addon, [
      'webhook-server',
      `--port=${PORTS.addonWebhook}`,
      `--certdir=${layout.webhookCertDir}`,
      `--kubeconfig=${layout.adminKubeconfig}`,
      '--v=1',
    ]),
    // No --auto-approved-csr-users and ManagedClusterAutoApproval stays off: `accept` is explicit, as with clusteradm.
    'registration-controller': spec('registration-controller', binaries.registration, [
      'controller',
      ...controllerFlags(hub, layout, HUB_CONTROLLER_NAMESPACE, PORTS.registrationController),
    ]),
    'addon-manager': spec('addon-manager', binaries.addon, ['manager', ...controllerFlags(hub, layout, HUB_CONTROLLER_NAMESPACE, PORTS.addonManager)]),
    'placement-controller': spec('placement-controller', binaries.placement, [
      'controller',
      ...controllerFlags(hub, layout, HUB_CONTROLLER_NAMESPACE, PORTS.placementController),
    ]),
  };
}

/**
 * The singleton klusterlet (registration + work agent in one process) of a
 * spoke. Every path flag is set: the defaults (/spoke/hub-kubeconfig, …) are
 * container mounts.
 */
export function klusterletSpec(spoke: ClusterPlan, binaries: Pick<OcmBinaries, 'registration-operator'>, layout: OcmLayout, agentId: string): ProcessSpec {
  return {
    name: KLUSTERLET_COMPONENT,
    binary: binaries['registration-operator'],
    prefix: spoke.netnsPrefix,
    ...files(spoke, KLUSTERLET_COMPONENT),
    env: env(layout, KLUSTERLET_COMPONENT),
    args: [
      'agent',
      ...controllerFlags(spoke, layout, AGENT_NAMESPACE, PORTS.klusterletAgent),
      `--spoke-kubeconfig=${layout.adminKubeconfig}`,
      `--spoke-cluster-name=${spoke.name}`,
      `--agent-id=${agentId}`,
      `--bootstrap-kubeconfig=${layout.bootstrapKubeconfig}`,
      `--hub-kubeconfig-dir=${layout.hubKubeconfigDir}`,
      `--hub-kubeconfig-secret=${HUB_KUBECONFIG_SECRET}`,
      '--workload-source-driver=kube',
      `--workload-source-config=${path.join(layout.hubKubeconfigDir, 'kubeconfig')}`,
      `--spoke-external-server-urls=${spoke.apiServerUrl}`,
    ],
  };
}
