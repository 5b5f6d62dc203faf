/** Reverse tunnel wire-compatible with apiserver-network-proxy v0.36: server, agent, client. */
export { startProxyServer, NO_AGENT_AVAILABLE } from './server.js';
export type { ProxyServer } from './server.js';
export { tlsProfileFromFlags } from './tls-profile.js';
export { tuneGcForBulkTransfer } from './gc-tuning.js';
export { DEFAULT_BACKOFF, reconnectDelay, startProxyAgent } from './agent.js';
export type { ProxyAgent } from './agent.js';
export { createTunnelClient, TunnelDialError, TunnelSocket } from './client.js';
export type { TunnelClient } from './client.js';
export { parseAgentIdentifiers } from './identifiers.js';
export { parseStrategies } from './strategy.js';
export type { Strategy } from './strategy.js';
