import { LabError } from '../../../errors.js';
import { run } from '../../../util/exec.js';
import { chooseCidr, readUsedRanges } from './cidr.js';
import { iptablesListing, iptablesRestore, listNetns, readLink, readSysctl, succeeds } from './machine.js';
import { interfacePrefix, planNetworkIn, type NetworkPlan, type NetworkPlanInput, type VpcPlan } from './plan.js';
import { vpcRoutes, vpcSysctls } from './vpc-routes.js';
import { applyScript, labChains, removalScript } from './rules.js';

/** Something applyNetwork created; recorded before it is created so `down` can always remove it. */
export type NetworkResource =
  | { kind: 'netns'; name: string }
  | { kind: 'link'; name: string }
  | { kind: 'iptables-chain'; table: string; chain: string; jumpFrom: string[] }
  | { kind: 'sysctl'; key: string; previous: string };

export const IP_FORWARD = 'net.ipv4.ip_forward';

/** Plans the lab's VPC namespaces in a range that overlaps nothing on this machine (reads its routes). */
export async function planNetwork(input: NetworkPlanInput): Promise<NetworkPlan> {
  const cidr = chooseCidr(input.cidr, await readUsedRanges(), interfacePrefix(input.labName));
  return planNetworkIn(input, cidr);
}

/** The command prefix that runs a program inside a VPC (empty in loopback mode). */
export function netnsExecPrefix(vpc: Pick<VpcPlan, 'netns'>): string[] {
  return vpc.netns ? ['ip', 'netns', 'exec', vpc.netns] : [];
}

/** Runs several `ip` commands in one process (in the namespace when given); stops at the first failure. */
async function ipBatch(lines: string[][], netns?: string): Promise<void> {
  await run('ip', [...(netns ? ['-n', netns] : []), '-batch', '-'], { input: `${lines.map((l) => l.join(' ')).join('\n')}\n` });
}

async function applyVpc(plan: NetworkPlan, vpc: VpcPlan, existingNetns: string[], record: (r: NetworkResource) => Promise<void>): Promise<void> {
  await record({ kind: 'netns', name: vpc.netns });
  if (!existingNetns.includes(vpc.netns)) await run('ip', ['netns', 'add', vpc.netns]);

  await record({ kind: 'link', name: vpc.hostIf });
  // A host end whose peer is not in the namespace (the namespace was re-created) is useless: start again.
  let hostEnd = await readLink(vpc.hostIf);
  if (hostEnd && !(await readLink(vpc.nsIf, vpc.netns))) {
    await run('ip', ['link', 'del', vpc.hostIf]);
    hostEnd = null;
  }
  if (!hostEnd) await run('ip', ['link', 'add', vpc.hostIf, 'type', 'veth', 'peer', 'name', vpc.nsIf, 'netns', vpc.netns]);
  // Loose reverse-path filtering on the host end: the effective value is the
  // maximum of `all` and the link's own, so 2 here keeps a strict `all` (1) from
  // dropping traffic that returns by another path. It vanishes with the link, so
  // there is nothing to restore. Inside a namespace every route uses its one link,
  // so strict filtering there can never drop anything.
  await run('sysctl', ['-q', '-w', `net.ipv4.conf.${vpc.hostIf}.rp_filter=2`]);
  await ipBatch([
    ['addr', 'replace', `${vpc.gateway}/${vpc.prefixLength}`, 'dev', vpc.hostIf],
    ['link', 'set', vpc.hostIf, 'up'],
  ]);
  await ipBatch(
    [
      ['link', 'set', 'lo', 'up'],
      ...Object.values(vpc.clusterAddresses).map((address) => ['addr', 'replace', `${address}/${vpc.prefixLength}`, 'dev', vpc.nsIf]),
      ['link', 'set', vpc.nsIf, 'up'],
      ['route', 'replace', 'default', 'via', vpc.gateway, 'dev', vpc.nsIf],
      ...vpcRoutes(plan, vpc).map((r) => ['route', 'replace', ...r.spec]),
    ],
    vpc.netns,
  );
  // Pods sit behind the namespace (see src/nodelet/pod-network): it forwards, and answers ARP for them.
  // These settings live in the namespace and vanish with it.
  await run('ip', ['netns', 'exec', vpc.netns, 'sysctl', '-q', '-w', ...Object.entries(vpcSysctls(vpc)).map(([k, v]) => `${k}=${v}`)]);
}

/**
 * Creates (or completes, or repairs) the lab's network. Idempotent. `record` is
 * awaited before each resource is created, so a crash half-way leaves nothing
 * unrecorded. Does nothing in loopback mode.
 */
export async function applyNetwork(plan: NetworkPlan, record: (r: NetworkResource) => Promise<void>): Promise<void> {
  if (plan.mode !== 'netns') return;
  const existingNetns = await listNetns();
  for (const vpc of plan.vpcs) await applyVpc(plan, vpc, existingNetns, record);

  const forwarding = await readSysctl(IP_FORWARD);
  if (forwarding !== '1') {
    await record({ kind: 'sysctl', key: IP_FORWARD, previous: forwarding });
    await run('sysctl', ['-q', '-w', `${IP_FORWARD}=1`]);
  }

  const chains = labChains(plan);
  for (const c of chains) await record({ kind: 'iptables-chain', table: c.table, chain: c.chain, jumpFrom: c.jumpFrom });
  await iptablesRestore(applyScript(chains, plan.comment, await iptablesListing('filter')));
}

type ChainResource = Extract<NetworkResource, { kind: 'iptables-chain' }>;

/** Removes several of the lab's chains of one table, and every rule jumping to them, in one transaction. */
async function removeChains(table: string, chains: ChainResource[]): Promise<void> {
  const script = removalScript(
    table,
    chains.map((c) => c.chain),
    await iptablesListing(table),
  );
  if (script) await iptablesRestore(script);
}

async function removeResource(r: Exclude<NetworkResource, ChainResource>): Promise<void> {
  switch (r.kind) {
    case 'netns':
      // Deleting the namespace also deletes the veth end inside it, and so its host peer.
      if ((await listNetns()).includes(r.name)) await run('ip', ['netns', 'del', r.name]);
      return;
    case 'link':
      if (await succeeds('ip', ['link', 'show', 'dev', r.name])) await run('ip', ['link', 'del', r.name]);
      return;
    case 'sysctl': {
      // Forwarding is shared by every lab on the machine: the last one down restores it.
      if (r.key === IP_FORWARD && /^-N OCMLAB-/m.test(await iptablesListing('filter'))) return;
      if ((await readSysctl(r.key)) !== r.previous) await run('sysctl', ['-q', '-w', `${r.key}=${r.previous}`]);
      return;
    }
  }
}

/**
 * Removes resources, newest first; ones already gone are fine, so it can run
 * twice, or from the records of an `up` that crashed half-way. Tries every one
 * and then reports all that could not be removed.
 */
export async function teardownNetwork(resources: NetworkResource[]): Promise<void> {
  const errors: string[] = [];
  const newestFirst = [...resources].reverse();
  for (let i = 0; i < newestFirst.length; i++) {
    const r = newestFirst[i] as NetworkResource;
    try {
      if (r.kind === 'iptables-chain') {
        // Neighbouring chains of one table go in one listing and one transaction.
        const group = [r];
        for (let next = newestFirst[i + 1]; next?.kind === 'iptables-chain' && next.table === r.table; next = newestFirst[i + 1]) {
          group.push(next);
          i++;
        }
        await removeChains(r.table, group);
      } else {
        await removeResource(r);
      }
    } catch (err) {
      errors.push((err as Error).message);
    }
  }
  if (errors.length) throw new LabError('failure', `could not remove every network resource of the lab:\n${errors.join('\n')}`);
}
