/**
 * `ocm-lab/addon-framework`: what an addon project imports. Bundles built by `ocm-lab addon dev`
 * keep this import external and get the copy inside our image at run time.
 */
export type { AddonDefinition, AgentValues, PolicyRule, HealthCheck } from './types.js';
export { AddonConfigError } from './deployment-config.js';
export type { KubeObject, Condition } from '../../kube/objects.js';
export { KubeClient } from '../../kube/client.js';
export { applyObject, getOrNull, objectPath, collectionPath } from '../../kube/objects.js';
export { agentWorkload, type AgentWorkloadOptions } from '../dev/agent-workload.js';
export { agentContext, type AgentContext } from '../dev/agent-context.js';
