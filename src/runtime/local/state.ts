import fs from 'node:fs/promises';
import path from 'node:path';
import type { LabConfig } from '../../config/index.js';
import { writeFileAtomic } from '../../util/atomic-file.js';
import type { NetworkPlan, NetworkResource } from './network/index.js';
import type { RuntimeName } from '../types.js';

/**
 * What a lab remembers about itself between commands. Everything `down` must
 * remove is in here (network resources are recorded before they are created),
 * so a crash half-way through `up` still leaves a lab that `down` can remove.
 */
export interface LabState {
  version: 1;
  lab: string;
  runtime: RuntimeName;
  createdAt: string;
  config: LabConfig;
  network: NetworkPlan | null;
  networkResources: NetworkResource[];
}

export function stateFile(labDirectory: string): string {
  return path.join(labDirectory, 'state.json');
}

export async function readState(labDirectory: string): Promise<LabState | null> {
  let text: string;
  try {
    text = await fs.readFile(stateFile(labDirectory), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const state = JSON.parse(text) as LabState;
  if (state.version !== 1) throw new Error(`${stateFile(labDirectory)}: unknown state version ${String(state.version)}`);
  return state;
}

export async function writeState(labDirectory: string, state: LabState): Promise<void> {
  await writeFileAtomic(stateFile(labDirectory), `${JSON.stringify(state, null, 2)}\n`, 0o600);
}

/** The parts of a lab's config that fix its shape; changing any of them needs `down` first. */
/**
 * Why a running lab cannot take `next` (null when it can). Spokes may come and
 * go; the hub, the VPCs, the Kubernetes version and the network range stay, and
 * no cluster moves to another VPC.
 */
export function reshapeRefusal(current: LabConfig, next: LabConfig): string | null {
  const hubOf = (c: LabConfig) => c.clusters.find((x) => x.hub);
  const [was, now] = [hubOf(current), hubOf(next)];
  if (was?.name !== now?.name || was?.vpc !== now?.vpc) return `its hub is ${was?.name ?? '?'} in ${was?.vpc ?? '?'}, and the hub of a lab cannot change (asked: ${now?.name ?? '?'} in ${now?.vpc ?? '?'})`;
  const vpcs = (c: LabConfig) => c.vpcs.map((v) => v.name).join(', ');
  if (vpcs(current) !== vpcs(next)) return `its VPCs are ${vpcs(current)}, and VPCs cannot be added or removed from a running lab (asked: ${vpcs(next)})`;
  if (current.kubernetesVersion !== next.kubernetesVersion) return `it runs Kubernetes ${current.kubernetesVersion} (asked: ${next.kubernetesVersion})`;
  if ((current.network.cidr ?? null) !== (next.network.cidr ?? null)) return `its network.cidr is ${current.network.cidr ?? 'chosen by ocm-lab'} (asked: ${next.network.cidr ?? 'chosen by ocm-lab'})`;
  for (const cluster of next.clusters) {
    const before = current.clusters.find((c) => c.name === cluster.name);
    if (before && before.vpc !== cluster.vpc) return `its cluster ${cluster.name} is in ${before.vpc}, and a cluster cannot move to ${cluster.vpc}`;
  }
  return null;
}
