import { AGENT_ADDON_NAMESPACE } from '../../ocm/constants.js';

/** The addon-framework's example addon (seed 003): ConfigMaps of a cluster's namespace on the hub, copied to the cluster. */
export const HELLOWORLD = 'helloworld';

/**
 * Where the agent runs and where it writes the copies: upstream's example installs into the
 * namespace every klusterlet keeps for addons, so nothing of ours creates or removes it.
 */
export const HELLOWORLD_NAMESPACE = AGENT_ADDON_NAMESPACE;
export const HELLOWORLD_AGENT_DEPLOYMENT = 'helloworld-agent';
export const HELLOWORLD_AGENT_SERVICE_ACCOUNT = 'helloworld-agent-sa';

/** The label upstream's agent puts on every copy it writes (value empty); our disable removes the copies by it. */
export const SYNCED_FROM_HUB_LABEL = 'synced-from-hub';
