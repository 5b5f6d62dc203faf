import { MissingPrerequisiteError } from '../../errors.js';
import type { HostFacts } from '../../host/facts.js';

/** kind's own advice for many clusters on one machine (its known-issues page). */
const MIN_INOTIFY_WATCHES = 524288;
const MIN_INOTIFY_INSTANCES = 512;
/**
 * MemAvailable a new cluster needs. Measured here (docker stats, 2026-11-23):
 * one kind node of this lab, idle without OCM, uses 450-520 MiB; OCM's agents
 * and the addons add a few hundred MiB; the rest is headroom for kubeadm's
 * start-up peak and the host's own page cache.
 */
export const MEMORY_PER_CLUSTER_BYTES = 1.5 * 1024 ** 3;

const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GiB`;

/**
 * What stops `newClusters` kind clusters from coming up on this host, one
 * sentence each with the command that fixes it (empty when nothing does).
 * On macOS and Windows the nodes run in Docker Desktop's VM: its limits are not ours to read.
 */
export function hostProblems(facts: HostFacts, newClusters: number): { problem: string; fix: string }[] {
  const problems: { problem: string; fix: string }[] = [];
  if (facts.platform.os !== 'linux' || newClusters === 0) return problems;
  if (facts.inotify.maxUserWatches !== null && facts.inotify.maxUserWatches < MIN_INOTIFY_WATCHES) {
    problems.push({
      problem:
        `fs.inotify.max_user_watches is ${facts.inotify.maxUserWatches}; ` +
        `kind clusters need at least ${MIN_INOTIFY_WATCHES} (kubelets and systemd in every node watch files)`,
      fix: `sudo sysctl -w fs.inotify.max_user_watches=${MIN_INOTIFY_WATCHES}`,
    });
  }
  if (facts.inotify.maxUserInstances !== null && facts.inotify.maxUserInstances < MIN_INOTIFY_INSTANCES) {
    problems.push({
      problem:
        `fs.inotify.max_user_instances is ${facts.inotify.maxUserInstances}; ` +
        `kind clusters need at least ${MIN_INOTIFY_INSTANCES} (clusters fail to start around the fourth otherwise)`,
      fix: `sudo sysctl -w fs.inotify.max_user_instances=${MIN_INOTIFY_INSTANCES}`,
    });
  }
  const needed = newClusters * MEMORY_PER_CLUSTER_BYTES;
  if (facts.memAvailableBytes !== null && facts.memAvailableBytes < needed) {
    problems.push({
      problem:
        `${gib(facts.memAvailableBytes)} of memory is available; ` +
        `${newClusters} new kind cluster${newClusters === 1 ? '' : 's'} need about ${gib(needed)} (${gib(MEMORY_PER_CLUSTER_BYTES)} each)`,
      fix: 'free memory (stop other labs: ocm-lab down --config …), or use a lab file with fewer clusters',
    });
  }
  return problems;
}

/** Throws exit 3 naming every host problem at once, so one round of fixes is enough. */
export function requireHostFits(facts: HostFacts, newClusters: number): void {
  const problems = hostProblems(facts, newClusters);
  if (!problems.length) return;
  throw new MissingPrerequisiteError(`this machine cannot run the lab's kind clusters: ${problems.map((p) => p.problem).join('; ')}`, {
    hint:
      `${problems.map((p) => p.fix).join('\n')}` +
      (problems.some((p) => p.fix.includes('sysctl')) ? '\n(to keep the sysctl settings across reboots, put them in /etc/sysctl.d/99-ocm-lab.conf)' : ''),
  });
}
