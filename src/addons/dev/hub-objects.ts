import { OCM_LAB_IMAGE } from '../../images/catalogue.js';
import type { KubeObject } from '../../kube/objects.js';
import { clusterRole, clusterRoleBinding, deployment, namespace, serviceAccount, serviceAccountSubject } from '../../kube/builders.js';
import { ADDON_MANAGER_NAMESPACE } from '../framework/names.js';
import type { AddonBundles } from './build.js';
import { FRAMEWORK_MANAGER_RULES } from '../framework/manager-rules.js';
import {
  AGENT_FILE,
  agentCodeHubConfigMapName,
  CODE_HASH_ANNOTATION,
  CODE_MOUNT,
  DEV_ADDON_LABEL,
  IMAGE_CODE_DIR,
  imageCodeHash,
  MANAGER_FILE,
  managerCodeConfigMapName,
  managerDeploymentName,
} from './names.js';

/**
 * What a dev addon's manager may do on the hub: what the framework's AddonManager does (addon API,
 * ManifestWorks, CSR approval, hub RBAC for its agents), and read its agent's code.
 */
const DEV_MANAGER_RULES = [
  ...FRAMEWORK_MANAGER_RULES,
  { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
];

export const managerRoleName = (addon: string) => `open-cluster-management:${addon}-addon-manager`;

/**
 * The hub side of a dev addon: the manager's identity, its code (manager bundle mounted from a
 * ConfigMap named after its hash; agent bundle in a ConfigMap the manager reads every pass) and its
 * Deployment, whose pod-template annotation carries the manager bundle's hash. An agent-only change
 * therefore leaves the manager running: it picks the new agent up on its next pass.
 * With `image` (the addon's own image, built from the project's Dockerfile) there is no code ConfigMap:
 * the manager runs the bundles in that image, and has its agents run them too.
 */
export function devHubObjects(addon: string, bundles: Pick<AddonBundles, 'manager' | 'agent'>, image?: string): KubeObject[] {
  const name = managerDeploymentName(addon);
  const ns = ADDON_MANAGER_NAMESPACE;
  const labels = { [DEV_ADDON_LABEL]: addon };
  const podLabels = { app: name, ...labels };
  const identity = [
    namespace(ns),
    serviceAccount({ name, namespace: ns, labels }),
    clusterRole({ name: managerRoleName(addon), labels }, DEV_MANAGER_RULES),
    clusterRoleBinding({ name: managerRoleName(addon), labels }, [serviceAccountSubject(name, ns)]),
  ];
  const managerDeployment = (o: { image: string; hash: string; args: string[]; codeConfigMap?: string }) =>
    deployment({
      name,
      namespace: ns,
      labels: podLabels,
      selector: { app: name },
      strategy: { type: 'Recreate' },
      podAnnotations: { [CODE_HASH_ANNOTATION]: o.hash },
      serviceAccount: name,
      containers: [
        {
          name: 'manager',
          image: o.image,
          args: ['internal', 'run-addon', ...o.args],
          volumeMounts: o.codeConfigMap ? [{ name: 'code', mountPath: CODE_MOUNT, readOnly: true }] : [],
        },
      ],
      podSpec: { terminationGracePeriodSeconds: 2, volumes: o.codeConfigMap ? [{ name: 'code', configMap: { name: o.codeConfigMap } }] : [] },
    });
  if (image) {
    return [...identity, managerDeployment({ image, hash: imageCodeHash(image), args: [`--module=${IMAGE_CODE_DIR}/${MANAGER_FILE}`, `--image=${image}`] })];
  }
  const codeName = managerCodeConfigMapName(addon, bundles.manager.hash);
  return [
    ...identity,
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: agentCodeHubConfigMapName(addon), namespace: ns, labels },
      data: { [AGENT_FILE]: bundles.agent.code },
    },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: codeName, namespace: ns, labels }, data: { [MANAGER_FILE]: bundles.manager.code } },
    managerDeployment({
      image: OCM_LAB_IMAGE,
      hash: bundles.manager.hash,
      args: [`--module=${CODE_MOUNT}/${MANAGER_FILE}`, `--agent-code=${ns}/${agentCodeHubConfigMapName(addon)}`],
      codeConfigMap: codeName,
    }),
  ];
}
