import { cgroupVersionOf, type HostFacts } from '../../host/facts.js';
import { minorOf, officialNodeImage, type KubernetesSource } from '../../provision/versions.js';
import { verdict, type RuntimeVerdict, type Verdict } from '../verdict.js';

/** kind's published node images from Kubernetes 1.35 on drop cgroup v1 (kubelet 1.35 refuses it by default). */
function needsCgroupV2(kubernetes: string): boolean {
  const minor = Number(/^v1\.(\d+)/.exec(kubernetes)?.[1] ?? 0);
  return minor >= 35;
}

function noEngine(facts: HostFacts): string | false {
  return !facts.engine?.available && `Docker does not answer${facts.engine?.reason ? ` (${facts.engine.reason})` : ''}`;
}

/** kind with kind's published node image for the minor of `kubernetes`; the cgroup version is the engine's (`docker info`) where it says. */
export function officialNodeVerdict(kubernetes: string, facts: HostFacts): Verdict {
  if (!officialNodeImage(kubernetes)) return verdict([`kind publishes no node image for ${minorOf(kubernetes)}`]);
  const cgroup = cgroupVersionOf(facts);
  return verdict([
    noEngine(facts),
    needsCgroupV2(kubernetes) &&
      cgroup.value === '1' &&
      `kind's published images for Kubernetes >= 1.35 need cgroup v2 (${cgroup.from === 'engine' ? 'the Docker engine runs' : 'this host has'} v1)`,
  ]);
}

/** kind's published node image is refused here only for the engine's cgroup v1 (a mirror's image may say it runs there). */
export function onlyCgroupV1Blocks(kubernetes: string, facts: HostFacts): boolean {
  return Boolean(officialNodeImage(kubernetes)) && !noEngine(facts) && needsCgroupV2(kubernetes) && cgroupVersionOf(facts).value === '1';
}

/** kind with the node image built here (building it needs root for debootstrap; a cached one only Docker). */
export function builtNodeVerdict(facts: HostFacts): Verdict {
  const linux = facts.platform.os === 'linux';
  return verdict([
    !linux && 'the node image is built with debootstrap, on Linux only',
    noEngine(facts),
    linux && !facts.root && 'building the node image needs root (debootstrap): `sudo ocm-lab setup --runtime kind` once',
  ]);
}

/** The kind runtime's ways to run `kubernetes` on this machine. */
export function kindVerdicts(kubernetes: string, facts: HostFacts): RuntimeVerdict[] {
  const official = officialNodeImage(kubernetes);
  return [
    { key: 'kindBuiltNodeImage', label: `kind, built node image (${kubernetes})`, verdict: builtNodeVerdict(facts) },
    {
      key: 'kindOfficialNodeImage',
      label: `kind, official node image${official ? ` (${official.kubernetes})` : ''}`,
      verdict: officialNodeVerdict(kubernetes, facts),
    },
  ];
}

/** With official artifacts: kind's published node image when this machine can run it, else the build here (and dl.k8s.io's same patch). */
export function kindKubernetesSource(kubernetes: string, facts: HostFacts): KubernetesSource {
  return officialNodeVerdict(kubernetes, facts).ok ? 'official-node' : 'built';
}
