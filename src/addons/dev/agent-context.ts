import { InvalidInputError } from '../../errors.js';
import { KubeClient } from '../../kube/client.js';
import { inPodClient } from '../framework/agent-env.js';
import { AGENT_ENV } from './names.js';

/** What an agent knows about where it runs, from the environment its Deployment sets. */
export interface AgentContext {
  addonName: string;
  clusterName: string;
  installNamespace: string;
  codeHash: string;
  /** The agent's hub client (its own identity, from the registration agent), when the addon declares hubPermissions. */
  hub: KubeClient | null;
  /** The managed cluster the agent runs on (in-pod credentials, or $KUBECONFIG). */
  spoke: KubeClient;
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new InvalidInputError(`$${name} is not set`, { hint: 'the agent runs in the Deployment agentWorkload() renders, which sets it' });
  return value;
}

export async function agentContext(env: NodeJS.ProcessEnv = process.env): Promise<AgentContext> {
  const hubFile = env[AGENT_ENV.hubKubeconfig];
  return {
    addonName: required(env, AGENT_ENV.addonName),
    clusterName: required(env, AGENT_ENV.clusterName),
    installNamespace: required(env, AGENT_ENV.installNamespace),
    codeHash: env[AGENT_ENV.codeHash] ?? '',
    hub: hubFile ? await KubeClient.fromKubeconfig(hubFile) : null,
    spoke: await inPodClient('addon agent'),
  };
}
