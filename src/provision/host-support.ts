import fs from 'node:fs/promises';
import { minorOf, officialNodeImage, type KubernetesSource } from './versions.js';

/** What decides which artifacts this machine can run. */
export interface HostFacts {
  /** The unified hierarchy: /sys/fs/cgroup/cgroup.controllers exists. */
  cgroupV2: boolean;
  docker: { available: boolean; reason?: string };
  root: boolean;
  platform: string;
}

export async function readCgroupV2(): Promise<boolean> {
  return fs.access('/sys/fs/cgroup/cgroup.controllers').then(
    () => true,
    () => false,
  );
}

/** Whether this machine can run one source, and if not why. */
export interface Verdict {
  ok: boolean;
  why?: string;
}

/** Every reason that stands in the way, or yes. */
function verdict(reasons: (string | false)[]): Verdict {
  const why = reasons.filter((r): r is string => Boolean(r));
  return why.length ? { ok: false, why: why.join('; ') } : { ok: true };
}

/** kind's published node images from Kubernetes 1.35 on drop cgroup v1 (kubelet 1.35 refuses it by default). */
function needsCgroupV2(kubernetes: string): boolean {
  const minor = Number(/^v1\.(\d+)/.exec(kubernetes)?.[1] ?? 0);
  return minor >= 35;
}

const NO_DOCKER = 'Docker does not answer';

/** kind with kind's published node image for the minor of `kubernetes`. */
export function officialNodeVerdict(kubernetes: string, facts: HostFacts): Verdict {
  if (!officialNodeImage(kubernetes)) return verdict([`kind publishes no node image for ${minorOf(kubernetes)}`]);
  return verdict([
    !facts.docker.available && NO_DOCKER,
    needsCgroupV2(kubernetes) && !facts.cgroupV2 && "kind's published images for Kubernetes >= 1.35 need cgroup v2 (this host has v1)",
  ]);
}

/** kind with the node image built here (building it needs root for debootstrap; a cached one only Docker). */
export function builtNodeVerdict(facts: HostFacts): Verdict {
  return verdict([
    facts.platform !== 'linux' && 'the node image is built with debootstrap, on Linux only',
    !facts.docker.available && NO_DOCKER,
    facts.platform === 'linux' && !facts.root && 'building the node image needs root (debootstrap): `sudo ocm-lab setup --runtime kind` once',
  ]);
}

/** The local runtime: control planes in network namespaces, as root on Linux. */
export function localVerdict(facts: HostFacts): Verdict {
  return verdict([facts.platform !== 'linux' && 'network namespaces are Linux only', !facts.root && 'needs root (network namespaces, iptables)']);
}

/**
 * Where a lab's Kubernetes comes from: kind's published node image when the lab runs on kind with official
 * artifacts and this machine can run that image; the build here (or dl.k8s.io's same patch) otherwise.
 */
export function kubernetesSourceFor(input: { runtime: string; source: 'official' | 'build'; kubernetes: string; facts: HostFacts }): KubernetesSource {
  if (input.runtime !== 'kind' || input.source !== 'official') return 'built';
  return officialNodeVerdict(input.kubernetes, input.facts).ok ? 'official-node' : 'built';
}
