import { OCM_LAB_IMAGE } from '../../images/catalogue.js';
import type { KubeObject } from '../../kube/objects.js';
import { deployment, namespace } from '../../kube/builders.js';
import { hubKubeconfigSecretName } from '../framework/names.js';
import {
  AGENT_ENV,
  AGENT_FILE,
  agentCodeConfigMapName,
  agentDeploymentName,
  CODE_HASH_ANNOTATION,
  CODE_MOUNT,
  codeHash,
  DEV_ADDON_LABEL,
  IMAGE_CODE_DIR,
  imageCodeHash,
} from './names.js';

export interface AgentBundle {
  code: string;
  hash: string;
  /** The addon's own image, whose IMAGE_CODE_DIR holds the agent bundle: no code ConfigMap then. */
  image?: string;
}

/**
 * The agent bundle the manager delivers on this pass. `internal run-addon` sets it from the hub
 * before each pass; the manager module reaches it through `ocm-lab/addon-framework`, which the
 * bundle imports from our image, so both see this one module.
 */
let current: AgentBundle | null = null;

export function setAgentBundle(code: string): AgentBundle {
  current = { code, hash: codeHash(code) };
  return current;
}

/** The agent runs from the addon's own image (`internal run-addon --image`): its bundle is in the image. */
export function setAgentImage(image: string): AgentBundle {
  current = { code: '', hash: imageCodeHash(image), image };
  return current;
}

const HUB_KUBECONFIG_DIR = '/etc/hub';

export interface AgentWorkloadOptions {
  addon: string;
  cluster: string;
  installNamespace: string;
  /** Mount the hub kubeconfig the registration agent writes (the addon declares hubPermissions). */
  hubAccess: boolean;
  /** Defaults to the bundle `internal run-addon` loaded from the hub. */
  bundle?: AgentBundle;
}

/**
 * The agent's objects on one cluster: its namespace, its code in a ConfigMap named after the
 * bundle's hash, and a Deployment of our image that runs it; or, for an addon run from its own image,
 * a Deployment of that image running the bundle inside it. The hash is also a pod-template
 * annotation, so every new bundle rolls the agent (Recreate: an old agent never outlives a new one).
 */
export function agentWorkload(o: AgentWorkloadOptions): KubeObject[] {
  const bundle = o.bundle ?? current ?? { code: '', hash: 'unbuilt' };
  const labels = { app: agentDeploymentName(o.addon), [DEV_ADDON_LABEL]: o.addon };
  const codeName = agentCodeConfigMapName(o.addon, bundle.hash);
  const env = [
    { name: AGENT_ENV.addonName, value: o.addon },
    { name: AGENT_ENV.clusterName, value: o.cluster },
    { name: AGENT_ENV.installNamespace, value: o.installNamespace },
    { name: AGENT_ENV.codeHash, value: bundle.hash },
    ...(o.hubAccess ? [{ name: AGENT_ENV.hubKubeconfig, value: `${HUB_KUBECONFIG_DIR}/kubeconfig` }] : []),
  ];
  const fromImage = bundle.image !== undefined;
  const volumeMounts = [
    ...(fromImage ? [] : [{ name: 'code', mountPath: CODE_MOUNT, readOnly: true }]),
    ...(o.hubAccess ? [{ name: 'hub-kubeconfig', mountPath: HUB_KUBECONFIG_DIR, readOnly: true }] : []),
  ];
  const volumes = [
    ...(fromImage ? [] : [{ name: 'code', configMap: { name: codeName } }]),
    // Written by the cluster's registration agent once the manager approved the agent's CSR.
    ...(o.hubAccess ? [{ name: 'hub-kubeconfig', secret: { secretName: hubKubeconfigSecretName(o.addon) } }] : []),
  ];
  const agentFile = `${fromImage ? IMAGE_CODE_DIR : CODE_MOUNT}/${AGENT_FILE}`;
  const code: KubeObject[] = fromImage
    ? []
    : [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: codeName, namespace: o.installNamespace, labels: { [DEV_ADDON_LABEL]: o.addon } },
          data: { [AGENT_FILE]: bundle.code },
        },
      ];
  return [
    namespace({ name: o.installNamespace, labels: { [DEV_ADDON_LABEL]: o.addon } }),
    ...code,
    deployment({
      name: agentDeploymentName(o.addon),
      namespace: o.installNamespace,
      labels,
      selector: { app: agentDeploymentName(o.addon) },
      strategy: { type: 'Recreate' },
      podAnnotations: { [CODE_HASH_ANNOTATION]: bundle.hash },
      containers: [{ name: 'agent', image: bundle.image ?? OCM_LAB_IMAGE, args: ['internal', 'run-addon', `--agent=${agentFile}`], env, volumeMounts }],
      podSpec: { terminationGracePeriodSeconds: 2, volumes },
    }),
  ];
}
