import { engineInspect } from './run.js';
import { networkCreateArgs } from './network-args.js';
import type { Engine, NetworkFacts, NetworkSpec } from './types.js';

interface DockerNetworkInspect {
  Name: string;
  Labels: Record<string, string> | null;
  IPAM?: { Config?: { Subnet?: string; Gateway?: string }[] | null };
  Containers?: Record<string, { Name: string; IPv4Address: string }> | null;
}

/** `docker network inspect`'s JSON in the seam's shape: the running containers are in its `Containers` map. */
export function dockerNetworkFacts(n: DockerNetworkInspect): NetworkFacts {
  const containers: Record<string, string> = {};
  for (const c of Object.values(n.Containers ?? {})) containers[c.Name] = c.IPv4Address.replace(/\/\d+$/, '');
  return { name: n.Name, subnet: n.IPAM?.Config?.find((c) => c.Subnet && !c.Subnet.includes(':'))?.Subnet ?? null, containers, labels: n.Labels ?? {} };
}

/** Docker: its bridge networks are isolated from one another by dockerd's DOCKER-ISOLATION chains, without options. */
export const dockerEngineSeam: Engine = {
  name: 'docker',
  cli: 'docker',
  title: 'Docker',
  networkCreateArgs(spec: NetworkSpec): string[] {
    return networkCreateArgs(spec);
  },
  async inspectNetwork(name: string): Promise<NetworkFacts | null> {
    const [n] = await engineInspect<DockerNetworkInspect>('docker', 'network', [name]);
    return n ? dockerNetworkFacts(n) : null;
  },
  kindEnv(network?: string): Record<string, string> {
    // kind's default provider choice takes Docker here (`docker -v` says "Docker version"): as before the seam.
    return network ? { KIND_EXPERIMENTAL_DOCKER_NETWORK: network } : {};
  },
  // Docker takes registries on 127.0.0.0/8 for insecure ones of its own accord.
  pushToLabRegistryArgs: (target: string) => ['push', '--quiet', target],
  imageDigest: (id: string) => id,
  storedImageRef: (ref: string) => ref,
  statsArgs: () => ['stats', '--no-stream', '--format', '{{.Name}}\t{{.MemUsage}}'],
  // kind's docker provider lets `docker run` make the node's /var volume, and `rm -v` takes it with the node.
  removeKindNodeVolumes: () => Promise.resolve([]),
};
