import fs from 'node:fs/promises';
import { MissingPrerequisiteError } from '../../errors.js';
import { readHostFacts, readInotifyUse, type HostFacts, type InotifyUse } from '../../host/facts.js';
import type { PreflightCheck } from '../preflight.js';

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

/** The local runtime's facts: the shared host facts, and the inotify instances this user's processes hold (from /proc). */
export async function localHostFacts(host?: HostFacts, inUse?: InotifyUse): Promise<LocalHostFacts> {
  const facts = host ?? (await readHostFacts());
  return {
    root: facts.root,
    maxUserInstances: facts.inotify.maxUserInstances,
    inotifyInstancesInUse: (inUse ?? (await readInotifyUse(process.getuid?.() ?? 0)))?.instances ?? 0,
    maxUserWatches: facts.inotify.maxUserWatches,
    memAvailableBytes: facts.memAvailableBytes,
  };
}

/** The local runtime runs Kubernetes' control planes as Linux processes in network namespaces: Linux only. Pure. */
export function localPlatformCheck(facts: Pick<HostFacts, 'platform'>): PreflightCheck {
  const os = facts.platform.os;
  if (os === 'linux') return { check: 'platform', level: 'ok', line: `linux/${facts.platform.arch}` };
  return {
    check: 'platform',
    level: 'stop',
    line: `the local runtime runs control planes as Linux processes in network namespaces; this is ${os}/${facts.platform.arch}`,
    fix: `use --runtime kind with Docker Desktop${os === 'windows' ? ', or run ocm-lab inside a WSL2 Linux distribution' : ''}`,
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

/** What the lab needs of each inotify limit with `newClusters` more clusters, and how that was counted. */
function inotifyNeeds(
  facts: LocalHostFacts,
  newClusters: number,
): Record<'fs.inotify.max_user_instances' | 'fs.inotify.max_user_watches', { needed: number; why: string }> {
  return {
    'fs.inotify.max_user_instances': {
      needed: facts.inotifyInstancesInUse + newClusters * INOTIFY_INSTANCES_PER_CLUSTER + INOTIFY_INSTANCES_SPARE,
      why: `${facts.inotifyInstancesInUse} in use, ${INOTIFY_INSTANCES_PER_CLUSTER} per new cluster × ${newClusters}, ${INOTIFY_INSTANCES_SPARE} spare`,
    },
    'fs.inotify.max_user_watches': { needed: MIN_INOTIFY_WATCHES, why: 'the floor the local runtime keeps' },
  };
}

/**
 * What `newClusters` more clusters need from this machine that it does not have: the inotify limits
 * it can raise (as root) and the memory it cannot.
 */
export function planHostFit(facts: LocalHostFacts, newClusters: number): HostFitPlan {
  const plan: HostFitPlan = { raise: [], problems: [] };
  const needs = inotifyNeeds(facts, newClusters);
  const instances = needs['fs.inotify.max_user_instances'].needed;
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
          `${r.key} is ${r.from}; with ${newClusters} more cluster${newClusters === 1 ? '' : 's'} it should be at least ` +
          `${needs[r.key as keyof typeof needs].needed} (${needs[r.key as keyof typeof needs].why}) ` +
          "— API servers, controller managers and OCM's agents watch files, and past the limit they fail to start",
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
  const plan = planHostFit(facts ?? (await localHostFacts()), newClusters);
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

/**
 * `up --dry-run`'s view of the local runtime's checks: the platform, then what planHostFit decides for `newClusters`
 * (a limit up raises as root is `ok` with the line saying so; without root it stops). Pure.
 */
export function localPreflight(host: Pick<HostFacts, 'platform'>, facts: LocalHostFacts, newClusters: number): PreflightCheck[] {
  const platform = localPlatformCheck(host);
  if (platform.level === 'stop') return [platform];
  const plan = planHostFit(facts, newClusters);
  const checks: PreflightCheck[] = [platform];
  const needs = inotifyNeeds(facts, newClusters);
  for (const key of ['fs.inotify.max_user_instances', 'fs.inotify.max_user_watches'] as const) {
    const limit = key === 'fs.inotify.max_user_instances' ? facts.maxUserInstances : facts.maxUserWatches;
    const raised = plan.raise.find((r) => r.key === key);
    const problem = plan.problems.find((p) => p.fix.includes(`${key}=`));
    if (raised)
      checks.push({ check: key, level: 'ok', line: `${key} is ${raised.from}; the lab needs ${needs[key].needed}: up raises it to ${raised.to} (as root)` });
    else if (problem)
      checks.push({ check: key, level: 'stop', line: problem.problem, fix: problem.fix, sysctl: { key, value: Number(problem.fix.split('=').at(-1)) } });
    else
      checks.push({
        check: key,
        level: 'ok',
        line: limit === null ? `${key}: not read on this machine` : `${key} is ${limit}; the lab needs ${needs[key].needed} (${needs[key].why})`,
      });
  }
  const memory = plan.problems.find((p) => !p.fix.includes('sysctl'));
  const available = facts.memAvailableBytes === null ? 'MemAvailable not read' : `${gib(facts.memAvailableBytes)} available`;
  checks.push(
    memory
      ? { check: 'memory', level: 'stop', line: memory.problem, fix: memory.fix }
      : { check: 'memory', level: 'ok', line: `${available}; ${newClusters} new clusters need about ${gib(newClusters * MEMORY_PER_CLUSTER_BYTES)}` },
  );
  return checks;
}
