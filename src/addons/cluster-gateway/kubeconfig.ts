import type { KubeconfigEntry } from '../../kube/kubeconfig.js';
import { GATEWAY_API, GATEWAY_RESOURCE } from './constants.js';

/** The path that turns a hub server URL into a managed cluster's (seed 001's "tweaked kubeconfig"). */
export function gatewayProxyPath(cluster: string): string {
  return `/apis/${GATEWAY_API}/${GATEWAY_RESOURCE}/${encodeURIComponent(cluster)}/proxy`;
}

/** A hub kubeconfig entry made to talk to `cluster` through the gateway: same credentials, server + proxy path. */
export function gatewayKubeconfigEntry(hub: KubeconfigEntry, cluster: string): KubeconfigEntry {
  return { ...hub, name: `${cluster}-via-gateway`, server: `${hub.server.replace(/\/+$/, '')}${gatewayProxyPath(cluster)}` };
}
