import fs from 'node:fs/promises';
import path from 'node:path';
import type { LabConfig } from '../../config/index.js';
import { labDir } from '../../paths.js';
import { writeFileAtomic } from '../../util/atomic-file.js';

/**
 * What a kind lab remembers (`<labDir>/state.json`, the same `runtime` and
 * `config` fields as every runtime). The Docker objects themselves are found by
 * name and label, so a lost state file does not orphan them.
 */
export interface KindLabState {
  version: 1;
  lab: string;
  runtime: 'kind';
  createdAt: string;
  config: LabConfig;
  nodeImage: string;
  images: string[];
}

export function kindStateFile(lab: string): string {
  return path.join(labDir(lab), 'state.json');
}

/** The state of a kind lab, or null when there is none (or the lab belongs to another runtime). */
export async function readKindState(lab: string): Promise<KindLabState | null> {
  const text = await fs.readFile(kindStateFile(lab), 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (text === null) return null;
  const state = JSON.parse(text) as KindLabState;
  return state.runtime === 'kind' ? state : null;
}

export async function writeKindState(state: KindLabState): Promise<void> {
  await writeFileAtomic(kindStateFile(state.lab), `${JSON.stringify(state, null, 2)}\n`, 0o600);
}

/**
 * Why a running kind lab cannot take `next` (null when it can): spokes may come
 * and go; the hub, the VPCs (Docker networks), the Kubernetes version (node
 * image) and network.cidr stay, and no cluster moves to another VPC.
 */
export function kindReshapeRefusal(current: LabConfig, next: LabConfig): string | null {
  const hubOf = (c: LabConfig) => c.clusters.find((x) => x.hub);
  const [was, now] = [hubOf(current), hubOf(next)];
  if (was?.name !== now?.name || was?.vpc !== now?.vpc) return `its hub is ${was?.name ?? '?'} in ${was?.vpc ?? '?'}, and the hub of a lab cannot change (asked: ${now?.name ?? '?'} in ${now?.vpc ?? '?'})`;
  const vpcs = (c: LabConfig) => c.vpcs.map((v) => v.name).join(', ');
  if (vpcs(current) !== vpcs(next)) return `its VPCs are ${vpcs(current)}, and VPCs cannot be added or removed from a running lab (asked: ${vpcs(next)})`;
  if (current.kubernetesVersion !== next.kubernetesVersion) return `it runs Kubernetes ${current.kubernetesVersion} (asked: ${next.kubernetesVersion})`;
  if ((current.network.cidr ?? null) !== (next.network.cidr ?? null)) return `its network.cidr is ${current.network.cidr ?? 'chosen by Docker'} (asked: ${next.network.cidr ?? 'chosen by Docker'})`;
  const moved = next.clusters.find((c) => current.clusters.some((b) => b.name === c.name && b.vpc !== c.vpc));
  return moved ? `its cluster ${moved.name} is in ${current.clusters.find((b) => b.name === moved.name)!.vpc}, and a cluster cannot move to ${moved.vpc}` : null;
}
