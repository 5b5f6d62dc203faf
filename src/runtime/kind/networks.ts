import { docker, dockerInspect, LABEL_LAB, LABEL_ROLE } from '../../images/docker.js';
import type { KindNetworkPlan } from './plan.js';

interface NetworkInspect {
  Name: string;
  Labels: Record<string, string> | null;
  IPAM?: { Config?: { Subnet?: string; Gateway?: string }[] | null };
  Containers?: Record<string, { Name: string; IPv4Address: string }> | null;
}

export interface NetworkFacts {
  name: string;
  subnet: string | null;
  /** Container name → its IPv4 address on this network. */
  containers: Record<string, string>;
  labels: Record<string, string>;
}

function factsOf(n: NetworkInspect): NetworkFacts {
  const containers: Record<string, string> = {};
  for (const c of Object.values(n.Containers ?? {})) containers[c.Name] = c.IPv4Address.replace(/\/\d+$/, '');
  return { name: n.Name, subnet: n.IPAM?.Config?.find((c) => c.Subnet && !c.Subnet.includes(':'))?.Subnet ?? null, containers, labels: n.Labels ?? {} };
}

export async function inspectNetworks(names: readonly string[]): Promise<NetworkFacts[]> {
  const found = await Promise.all(names.map((n) => dockerInspect<NetworkInspect>('network', [n])));
  return found.flat().map(factsOf);
}

/** The VPC networks of a lab, found by label (what `down` removes). */
export async function labNetworks(lab: string): Promise<string[]> {
  const r = await docker(['network', 'ls', '--filter', `label=${LABEL_LAB}=${lab}`, '--filter', `label=${LABEL_ROLE}=vpc`, '--format', '{{.Name}}']);
  return r.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

/**
 * The VPC's network, created when missing. A network of that name without our
 * labels is somebody else's: refused rather than taken over.
 */
export async function ensureNetwork(plan: KindNetworkPlan): Promise<'created' | 'exists'> {
  const [existing] = await inspectNetworks([plan.name]);
  if (existing) {
    if (existing.labels[LABEL_LAB] !== plan.labels[LABEL_LAB]) {
      throw new Error(
        `a Docker network named ${plan.name} exists and is not this lab's (labels: ${JSON.stringify(existing.labels)}); ` +
          `remove it (docker network rm ${plan.name}) or name the lab differently`,
      );
    }
    return 'exists';
  }
  const args = ['network', 'create', '--driver', 'bridge'];
  if (plan.subnet) args.push('--subnet', plan.subnet);
  if (plan.gateway) args.push('--gateway', plan.gateway);
  for (const [k, v] of Object.entries(plan.labels)) args.push('--label', `${k}=${v}`);
  args.push(plan.name);
  await docker(args);
  return 'created';
}

export async function removeNetwork(name: string): Promise<boolean> {
  const r = await docker(['network', 'rm', name], { allowFailure: true });
  if (r.exitCode === 0) return true;
  if (/not found|No such network/i.test(r.stderr)) return false;
  throw new Error(`docker network rm ${name} failed: ${r.stderr.trim()}`);
}
