import { agentWorkload, type AddonDefinition } from 'ocm-lab/addon-framework';

const NAME = '__NAME__';

/** The hub side: the framework installs the agent on every cluster and reports its health. */
const addon: AddonDefinition = {
  name: NAME,
  displayName: '__NAME__',
  description: 'Reports which version of its agent runs on each managed cluster.',
  installNamespace: `${NAME}-agent`,
  // The agent's hub identity may write ConfigMaps in its own cluster's namespace only.
  hubPermissions: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create', 'update'] }],
  // Namespace, the agent's code and its Deployment; Available once that Deployment is ready.
  agentManifests: async (cluster) => agentWorkload({ addon: NAME, cluster, installNamespace: `${NAME}-agent`, hubAccess: true }),
};

export default addon;
