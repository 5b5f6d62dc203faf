/** Reverse tunnel wire-compatible with apiserver-network-proxy v0.36: server, agent, client. */
export { startProxyServer, NO_AGENT_AVAILABLE } from './server.js';
export type { ProxyServer, ProxyServerOptions, ListenAddress, ServerTLS } from './server.js';
export {
  DEFAULT_TLS_PROFILE,
  nodeTlsOptions,
  readTlsProfile,
  tlsProfileArgs,
  tlsProfileFromData,
  tlsProfileFromFlags,
  TLS_PROFILE_CONFIGMAP,
  TlsProfileError,
} from './tls-profile.js';
export type { NodeTlsOptions, TlsProfile } from './tls-profile.js';
export { DEFAULT_BACKOFF, reconnectDelay, startProxyAgent } from './agent.js';
export type { ProxyAgent, ProxyAgentOptions } from './agent.js';
export { createTunnelClient, TunnelDialError, TunnelSocket } from './client.js';
export type { TunnelClient, TunnelClientOptions, UndiciConnector } from './client.js';
export { parseAgentIdentifiers, formatAgentIdentifiers } from './identifiers.js';
export type { AgentIdentifiers } from './identifiers.js';
export { parseStrategies, STRATEGIES } from './strategy.js';
export type { Strategy } from './strategy.js';
