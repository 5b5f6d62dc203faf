import { addonImplementation, SUPPORTED_OCM_VERSIONS, type LabConfig } from '../config/types.js';

/**
 * Why a running lab cannot take `next` (null when it can), on any runtime that
 * creates its clusters: spokes may come and go; the hub, the VPCs, the
 * Kubernetes and OCM versions, the network range and each kept addon's implementation
 * stay (switching between ours and upstream's would leave the other's objects
 * behind), and no cluster moves to another VPC. `unsetCidr` says who picks the range when the lab file does not.
 */
export function reshapeRefusal(current: LabConfig, next: LabConfig, unsetCidr = 'chosen by ocm-lab'): string | null {
  const hubOf = (c: LabConfig) => c.clusters.find((x) => x.hub);
  const [was, now] = [hubOf(current), hubOf(next)];
  if (was?.name !== now?.name || was?.vpc !== now?.vpc)
    return `its hub is ${was?.name ?? '?'} in ${was?.vpc ?? '?'}, and the hub of a lab cannot change (asked: ${now?.name ?? '?'} in ${now?.vpc ?? '?'})`;
  const vpcs = (c: LabConfig) => c.vpcs.map((v) => v.name).join(', ');
  if (vpcs(current) !== vpcs(next)) return `its VPCs are ${vpcs(current)}, and VPCs cannot be added or removed from a running lab (asked: ${vpcs(next)})`;
  if (current.kubernetesVersion !== next.kubernetesVersion) return `it runs Kubernetes ${current.kubernetesVersion} (asked: ${next.kubernetesVersion})`;
  if (current.ocmVersion !== next.ocmVersion) return ocmChangeRefusal(current.ocmVersion, next.ocmVersion);
  if ((current.network.cidr ?? null) !== (next.network.cidr ?? null))
    return `its network.cidr is ${current.network.cidr ?? unsetCidr} (asked: ${next.network.cidr ?? unsetCidr})`;
  for (const addon of next.addons.filter((a) => current.addons.includes(a))) {
    const [was, asked] = [addonImplementation(current, addon), addonImplementation(next, addon)];
    if (was !== asked) return `its ${addon} is ${was}'s build, and a running lab's addon cannot switch implementations (asked: ${asked})`;
  }
  for (const cluster of next.clusters) {
    const before = current.clusters.find((c) => c.name === cluster.name);
    if (before && before.vpc !== cluster.vpc) return `its cluster ${cluster.name} is in ${before.vpc}, and a cluster cannot move to ${cluster.vpc}`;
  }
  return null;
}

/** Why a lab on OCM `running` cannot move to `asked`: a downgrade never (clusteradm refuses one too), an upgrade not yet in place. */
function ocmChangeRefusal(running: string, asked: string): string {
  // Newest first: a larger index is an older release.
  const downgrade = SUPPORTED_OCM_VERSIONS.indexOf(asked) > SUPPORTED_OCM_VERSIONS.indexOf(running);
  return downgrade
    ? `it runs OCM ${running}, and OCM cannot be downgraded to ${asked} (clusteradm upgrade refuses a downgrade too)`
    : `it runs OCM ${running}, and upgrading it in place to ${asked} is not supported yet`;
}
