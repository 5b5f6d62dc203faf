import { engineInspect, engineRun } from './run.js';
import { networkCreateArgs } from './network-args.js';
import { namesRegistry } from '../../provision/oci/reference.js';
import type { Engine, NetworkFacts, NetworkSpec } from './types.js';

/** `podman network inspect`'s JSON (netavark, podman 4.x): lower-case keys, and no map of the attached containers. */
interface PodmanNetworkInspect {
  name: string;
  labels?: Record<string, string> | null;
  subnets?: { subnet?: string; gateway?: string }[] | null;
}

interface PodmanContainerInspect {
  Name: string;
  NetworkSettings?: { Networks?: Record<string, { IPAddress?: string }> | null };
}

/** The seam's shape from a Podman network and its running containers' inspects (found with `ps --filter network=`). */
export function podmanNetworkFacts(n: PodmanNetworkInspect, containers: readonly PodmanContainerInspect[]): NetworkFacts {
  const addresses: Record<string, string> = {};
  for (const c of containers) {
    const address = c.NetworkSettings?.Networks?.[n.name]?.IPAddress;
    if (address) addresses[c.Name.replace(/^\//, '')] = address;
  }
  return { name: n.name, subnet: n.subnets?.find((s) => s.subnet && !s.subnet.includes(':'))?.subnet ?? null, containers: addresses, labels: n.labels ?? {} };
}

/**
 * Podman: bridge networks route to one another unless netavark is told `isolate=true` (then it drops forwarding between
 * them, as dockerd's isolation chains do); kind is told to use its podman provider and which network to join.
 */
export const podmanEngineSeam: Engine = {
  name: 'podman',
  cli: 'podman',
  title: 'Podman',
  networkCreateArgs(spec: NetworkSpec): string[] {
    return networkCreateArgs(spec, ['isolate=true']);
  },
  async inspectNetwork(name: string): Promise<NetworkFacts | null> {
    const [n] = await engineInspect<PodmanNetworkInspect>('podman', 'network', [name]);
    if (!n) return null;
    const listed = await engineRun('podman', ['ps', '--filter', `network=${name}`, '--format', '{{.Names}}'], { allowFailure: true });
    const names = listed.stdout
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    return podmanNetworkFacts(n, await engineInspect<PodmanContainerInspect>('podman', 'container', names));
  },
  kindEnv(network?: string): Record<string, string> {
    // kind reads only KIND_EXPERIMENTAL_PODMAN_NETWORK with this provider (docs/notes.md, kind's podman provider).
    return { KIND_EXPERIMENTAL_PROVIDER: 'podman', ...(network ? { KIND_EXPERIMENTAL_PODMAN_NETWORK: network } : {}) };
  },
  // Podman asks for TLS of every registry not marked insecure in registries.conf, loopback ones too.
  pushToLabRegistryArgs: (target: string) => ['push', '--quiet', '--tls-verify=false', target],
  imageDigest: (id: string) => (/^[0-9a-f]{64}$/.test(id) ? `sha256:${id}` : id),
  statsArgs: () => ['stats', '--no-stream', '--format', '{{.Name}}\t{{.MemUsage}}'],
  // `podman build -t ocm-lab/kind-node:…` and `podman load` of such a tag store localhost/ocm-lab/kind-node:…; kind's podman
  // provider, given the short name, looks for docker.io/ocm-lab/kind-node:… and pulls it from Docker Hub (docs/notes.md).
  storedImageRef: (ref: string) => (namesRegistry(ref) ? ref : `localhost/${ref}`),
  async removeKindNodeVolumes(cluster: string): Promise<string[]> {
    const listed = await engineRun('podman', ['volume', 'ls', '--format', 'json'], { allowFailure: true });
    const names = kindNodeVolumes(parseVolumeList(listed.stdout), cluster);
    if (names.length) await engineRun('podman', ['volume', 'rm', '--force', ...names], { allowFailure: true });
    return names;
  },
};

interface PodmanVolume {
  Name: string;
  Labels?: Record<string, string> | null;
}

function parseVolumeList(json: string): PodmanVolume[] {
  try {
    const parsed = JSON.parse(json) as unknown;
    return Array.isArray(parsed) ? (parsed as PodmanVolume[]) : [];
  } catch {
    return [];
  }
}

/**
 * The volumes kind's podman provider made for cluster `cluster`'s nodes: each is labelled `<node container name>=true`
 * (its createAnonymousVolume), the node named `<cluster>-control-plane`, `<cluster>-worker[N]` or
 * `<cluster>-external-load-balancer`. Pure.
 */
export function kindNodeVolumes(volumes: readonly PodmanVolume[], cluster: string): string[] {
  const node = new RegExp(`^${cluster.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-(control-plane\\d*|worker\\d*|external-load-balancer)$`);
  return volumes.filter((v) => Object.entries(v.Labels ?? {}).some(([key, value]) => value === 'true' && node.test(key))).map((v) => v.Name);
}
