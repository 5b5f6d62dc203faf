import { proxyEnvironment } from '../../util/outbound-proxy.js';
import { REGISTRY_CONTAINER } from '../../images/registry/names.js';
import type { KindLabPlan } from './plan.js';

/**
 * What `kind create cluster` is given of the environment's proxy settings, so every node gets what the CLI uses.
 *
 * kind itself copies HTTP_PROXY, HTTPS_PROXY and NO_PROXY (the upper-case one when both spellings are set) into each
 * node container under both spellings, and appends to NO_PROXY the cluster's service and pod subnets, the node
 * network's subnets, the cluster's node names and `.svc`, `.svc.cluster`, `.svc.cluster.local`; the node's entrypoint
 * makes them systemd's default environment, so containerd and the kubelet use them (docs/notes.md, "kind passes the
 * proxy to its nodes"). Two things it cannot know, added here:
 * - which spelling ocm-lab followed: the value the CLI used (the lower-case one wins, util/outbound-proxy.ts) is given
 *   under both spellings, so the nodes never use another proxy than the CLI;
 * - the lab's own names: containerd pulls the lab's images from `ocm-lab-registry:5000` by name, which the subnets kind
 *   adds do not cover (a CIDR matches only an address), so the registry, the hub's endpoint and every node of the lab
 *   are added, and `localhost`, `127.0.0.1` (go direct in Go anyway; for curl and the rest).
 * With no proxy in the environment nothing is added: kind then does as it does (its own reading of Docker's config.json).
 */
export function kindProxyEnv(env: NodeJS.ProcessEnv, plan: Pick<KindLabPlan, 'hubEndpoint' | 'clusters'>): Record<string, string> {
  const settings = proxyEnvironment(env);
  if (!settings.https && !settings.http) return {};
  const out: Record<string, string> = {};
  const both = (name: 'HTTPS_PROXY' | 'HTTP_PROXY' | 'NO_PROXY', value: string) => {
    out[name] = value;
    out[name.toLowerCase()] = value;
  };
  if (settings.https) both('HTTPS_PROXY', settings.https.value);
  if (settings.http) both('HTTP_PROXY', settings.http.value);
  const own = [REGISTRY_CONTAINER, plan.hubEndpoint.name, ...plan.clusters.map((c) => c.nodeContainer), 'localhost', '127.0.0.1'];
  const user = settings.no?.value.split(/[,\s]+/).filter(Boolean) ?? [];
  both('NO_PROXY', [...new Set([...user, ...own])].join(','));
  return out;
}
