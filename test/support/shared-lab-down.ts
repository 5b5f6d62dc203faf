import fs from 'node:fs/promises';
import { expect } from 'vitest';
import { downLab } from '../../src/lab/lifecycle.js';
import { kubectl, machineSnapshot } from './lab.js';
import { alive } from './process.js';
import type { TestLab } from './test-lab.js';

export const MSA_NS = 'open-cluster-management-managed-serviceaccount';
export const PROXY_NS = 'open-cluster-management-cluster-proxy';

interface PodJson {
  status: { containerStatuses?: { containerID?: string }[] };
}

/**
 * The process ids of every container of the pods in `namespaces` of each context: container processes do not name the
 * lab home in their arguments, so a shared lab's last user finds them by their pods.
 */
export async function containerPids(lab: TestLab, namespaces: readonly (readonly [string, readonly string[]])[]): Promise<number[]> {
  const pids: number[] = [];
  for (const [context, inContext] of namespaces) {
    for (const ns of inContext) {
      const r = await kubectl(lab.kubeconfig, ['--context', context, '-n', ns, 'get', 'pods', '-o', 'json']);
      if (r.exitCode !== 0) throw new Error(`kubectl -n ${ns} get pods: ${r.stderr}`);
      const pods = JSON.parse(r.stdout) as { items: PodJson[] };
      for (const p of pods.items) for (const c of p.status.containerStatuses ?? []) pids.push(Number(c.containerID?.replace('ocm-lab://', '')));
    }
  }
  return pids;
}

/** `down` of a shared lab: every one of `pids` gone, no process of the lab left, and its home removed (the run's teardown then has nothing to do). */
export async function downLeavesNothing(lab: TestLab, pids: readonly number[]): Promise<void> {
  await downLab(lab.config);
  for (const pid of pids) expect(alive(pid), `pid ${pid}`).toBe(false);
  expect((await machineSnapshot(lab.home)).processes).toEqual([]);
  await fs.rm(lab.home, { recursive: true, force: true });
}
