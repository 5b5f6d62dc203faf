import fs from 'node:fs/promises';
import { MissingPrerequisiteError } from '../../errors.js';
import { readHostFacts } from '../../host/facts.js';

/**
 * inotify instances one cluster's processes hold (kube-apiserver, kube-controller-manager and OCM's
 * agents watch their certificate files; measured on a running lab, docs/reliability.md). The limit
 * is per user, and every process of the lab runs as the same user.
 */
export const INOTIFY_INSTANCES_PER_CLUSTER = 16;
/** Headroom over what is in use plus what the new clusters take. */
const INOTIFY_INSTANCES_SPARE = 32;
/** When the limit must go up, at least to this (kind's advice for many clusters on one machine). */
export const RAISED_INOTIFY_INSTANCES = 512;
const MIN_INOTIFY_WATCHES = 65_536;
/**
 * MemAvailable one more cluster needs on this runtime: a managed cluster with the default addons
 * settles at about 500 MiB PSS (docs/reliability.md, scale bench); the rest is start-up peak and page cache.
 */
export const MEMORY_PER_CLUSTER_BYTES = 1024 ** 3;

/** What the local runtime checks: the shared host facts (host/facts.ts) and the inotify instances this user holds. */
export interface LocalHostFacts {
  root: boolean;
  maxUserInstances: number | null;
  /** inotify instances this user's processes hold now (the lab's running clusters included). */
  inotifyInstancesInUse: number;
  maxUserWatches: number | null;
  memAvailableBytes: number | null;
}

/** inotify instances held by the processes of user `uid`. */
async function inotifyInstancesOf(uid: number): Promise<number> {
  let count = 0;
  for (const p of await fs.readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(p)) continue;
    const status = await fs.readFile(`/proc/${p}/status`, 'utf8').catch(() => '');
    if (Number(/^Uid:\s+(\d+)/m.exec(status)?.[1] ?? -1) !== uid) continue;
    for (const fd of await fs.readdir(`/proc/${p}/fd`).catch(() => [] as string[])) {
      if ((await fs.readlink(`/proc/${p}/fd/${fd}`).catch(() => '')) === 'anon_inode:inotify') count++;
    }
  }
  return count;
}

async function readLocalHostFacts(): Promise<LocalHostFacts> {
  const facts = await readHostFacts();
  return {
    root: facts.root,
    maxUserInstances: facts.inotify.maxUserInstances,
    inotifyInstancesInUse: await inotifyInstancesOf(process.getuid?.() ?? 0),
    maxUserWatches: facts.inotify.maxUserWatches,
    memAvailableBytes: facts.memAvailableBytes,
  };
}

export interface HostFitPlan {
  /** sysctl settings to raise: [file under /proc/sys, from, to]. */
  raise: { key: string; file: string; from: number; to: number }[];
  /** What cannot be fixed here, one sentence each with what to do. */
  problems: { problem: string; fix: string }[];
}

/** The file under /proc/sys a sysctl key is written through (its dots become slashes). */
const sysctlFile = (key: string) => `/proc/sys/${key.replaceAll('.', '/')}`;

const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GiB`;

/**
 * What `newClusters` more clusters need from this machine that it does not have: the inotify limits
 * it can raise (as root) and the memory it cannot.
 */
export function planHostFit(facts: LocalHostFacts, newClusters: number): HostFitPlan {
  const plan: HostFitPlan = { raise: [], problems: [] };
  const instances = facts.inotifyInstancesInUse + newClusters * INOTIFY_INSTANCES_PER_CLUSTER + INOTIFY_INSTANCES_SPARE;
  if (facts.maxUserInstances !== null && facts.maxUserInstances < instances) {
    plan.raise.push({
      key: 'fs.inotify.max_user_instances',
      file: sysctlFile('fs.inotify.max_user_instances'),
      from: facts.maxUserInstances,
      to: Math.max(RAISED_INOTIFY_INSTANCES, 2 * instances),
    });
  }
  if (facts.maxUserWatches !== null && facts.maxUserWatches < MIN_INOTIFY_WATCHES) {
    plan.raise.push({
      key: 'fs.inotify.max_user_watches',
      file: sysctlFile('fs.inotify.max_user_watches'),
      from: facts.maxUserWatches,
      to: MIN_INOTIFY_WATCHES,
    });
  }
  if (!facts.root) {
    for (const r of plan.raise) {
      plan.problems.push({
        problem:
          `${r.key} is ${r.from}; with ${newClusters} more cluster${newClusters === 1 ? '' : 's'} it should be at least ${r.to} ` +
          "(API servers, controller managers and OCM's agents watch files, and past the limit they fail to start)",
        fix: `sudo sysctl -w ${r.key}=${r.to}`,
      });
    }
    plan.raise = [];
  }
  const needed = newClusters * MEMORY_PER_CLUSTER_BYTES;
  if (newClusters > 0 && facts.memAvailableBytes !== null && facts.memAvailableBytes < needed) {
    plan.problems.push({
      problem:
        `${gib(facts.memAvailableBytes)} of memory is available; ` +
        `${newClusters} new cluster${newClusters === 1 ? '' : 's'} need about ${gib(needed)} (${gib(MEMORY_PER_CLUSTER_BYTES)} each)`,
      fix: 'free memory (stop other labs: ocm-lab down --config …), or use a lab file with fewer clusters',
    });
  }
  return plan;
}

/**
 * Raises the limits the lab needs (as root; each change is reported through `progress` and stays
 * after the lab is gone, as the kernel's limits are the machine's), or throws exit 3 naming every
 * problem at once, before anything of the lab is started.
 */
export async function ensureHostFits(totalClusters: number, newClusters: number, progress: (line: string) => void, facts?: LocalHostFacts): Promise<string[]> {
  if (newClusters === 0) return [];
  const plan = planHostFit(facts ?? (await readLocalHostFacts()), newClusters);
  if (plan.problems.length) {
    throw new MissingPrerequisiteError(`this machine cannot run the lab's ${totalClusters} clusters: ${plan.problems.map((p) => p.problem).join('; ')}`, {
      hint:
        `${plan.problems.map((p) => p.fix).join('\n')}` +
        `${plan.problems.some((p) => p.fix.includes('sysctl')) ? '\n(to keep sysctl settings across reboots, put them in /etc/sysctl.d/99-ocm-lab.conf)' : ''}`,
    });
  }
  const raised: string[] = [];
  for (const r of plan.raise) {
    try {
      await fs.writeFile(r.file, `${r.to}\n`);
    } catch (err) {
      throw new MissingPrerequisiteError(
        `${r.key} is ${r.from}; ${totalClusters} clusters need at least ${r.to}, and writing ${r.file} failed: ${(err as Error).message}`,
        {
          hint: `sudo sysctl -w ${r.key}=${r.to}`,
        },
      );
    }
    const line = `raised ${r.key} from ${r.from} to ${r.to} for ${newClusters} more clusters (${totalClusters} in the lab)`;
    progress(line);
    raised.push(line);
  }
  return raised;
}
