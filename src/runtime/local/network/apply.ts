import fs from 'node:fs/promises';
import { run } from '../../../util/exec.js';
import { chooseCidr, readUsedRanges } from './cidr.js';
import { chainName, interfacePrefix, netnsPrefixOf, planNetworkIn, ruleComment, type NetworkPlan, type NetworkPlanInput, type VpcPlan } from './plan.js';

export type NetworkResource =
  | { kind: 'netns'; name: string }
  | { kind: 'link'; name: string }
  | { kind: 'iptables-chain'; table: string; chain: string; jumpFrom: string[]; comment: string }
  | { kind: 'sysctl'; key: string; previous: string };

const FILTER = 'filter';

async function ok(file: string, args: string[]): Promise<boolean> {
  return (await run(file, args, { allowFailure: true })).exitCode === 0;
}

/** Whether this process can create network namespaces, veths and forwarding rules. */
export async function probeNetworkCapability(): Promise<{ canIsolate: boolean; reason?: string }> {
  const status = await fs.readFile('/proc/self/status', 'utf8').catch(() => '');
  const capEff = BigInt(`0x${/CapEff:\s*([0-9a-f]+)/i.exec(status)?.[1] ?? '0'}`);
  const CAP_NET_ADMIN = 1n << 12n;
  if ((capEff & CAP_NET_ADMIN) === 0n) return { canIsolate: false, reason: 'not root and no CAP_NET_ADMIN' };
  for (const [tool, pkg] of [['ip', 'iproute2'], ['iptables', 'iptables']] as const) {
    const probe = tool === 'ip' ? ['netns', 'list'] : ['-t', FILTER, '-S', 'FORWARD'];
    const r = await run(tool, probe, { allowFailure: true }).catch(() => null);
    if (!r || r.exitCode !== 0) return { canIsolate: false, reason: `'${tool} ${probe.join(' ')}' does not work (install ${pkg})` };
  }
  return { canIsolate: true };
}

/** Plans the lab's VPC namespaces in a range that overlaps nothing on this machine. */
export async function planNetwork(input: NetworkPlanInput): Promise<NetworkPlan> {
  const cidr = chooseCidr(input.cidr, await readUsedRanges(), interfacePrefix(input.labName));
  return planNetworkIn(input, cidr);
}

export function netnsExecPrefix(vpc: Pick<VpcPlan, 'netns'>): string[] {
  return vpc.netns ? ['ip', 'netns', 'exec', vpc.netns] : [];
}

async function netnsExists(name: string): Promise<boolean> {
  const listed = (await run('ip', ['netns', 'list'])).stdout;
  return listed.split('\n').some((line) => line.split(' ')[0] === name);
}

async function linkExists(name: string): Promise<boolean> {
  return ok('ip', ['link', 'show', 'dev', name]);
}

async function chainExists(chain: string): Promise<boolean> {
  return ok('iptables', ['-t', FILTER, '-S', chain]);
}

/** The forwarding rules: replies flow, spokes reach the hub, nothing else crosses a VPC boundary. */
export function chainRules(plan: NetworkPlan): string[][] {
  const tag = ['-m', 'comment', '--comment', plan.comment];
  const hub = plan.vpcs.find((v) => v.hub);
  const rules: string[][] = [['-m', 'conntrack', '--ctstate', 'ESTABLISHED,RELATED', ...tag, '-j', 'ACCEPT']];
  if (hub) {
    for (const spoke of plan.vpcs.filter((v) => !v.hub)) rules.push(['-i', spoke.hostIf, '-o', hub.hostIf, ...tag, '-j', 'ACCEPT']);
  }
  // Everything else a VPC sends through the host (to another VPC or out of the machine), and
  // everything forwarded into a VPC, is dropped. The host's own traffic does not pass FORWARD.
  for (const vpc of plan.vpcs) rules.push(['-i', vpc.hostIf, ...tag, '-j', 'DROP']);
  for (const vpc of plan.vpcs) rules.push(['-o', vpc.hostIf, ...tag, '-j', 'DROP']);
  return rules;
}

async function applyVpc(vpc: VpcPlan, record: (r: NetworkResource) => Promise<void>): Promise<void> {
  await record({ kind: 'netns', name: vpc.netns });
  if (!(await netnsExists(vpc.netns))) await run('ip', ['netns', 'add', vpc.netns]);
  await run('ip', ['-n', vpc.netns, 'link', 'set', 'lo', 'up']);
  await record({ kind: 'link', name: vpc.hostIf });
  if (!(await linkExists(vpc.hostIf))) {
    await run('ip', ['link', 'add', vpc.hostIf, 'type', 'veth', 'peer', 'name', vpc.nsIf, 'netns', vpc.netns]);
  }
  await run('ip', ['addr', 'replace', `${vpc.gateway}/${vpc.prefixLength}`, 'dev', vpc.hostIf]);
  await run('ip', ['link', 'set', vpc.hostIf, 'up']);
  for (const address of Object.values(vpc.clusterAddresses)) {
    await run('ip', ['-n', vpc.netns, 'addr', 'replace', `${address}/${vpc.prefixLength}`, 'dev', vpc.nsIf]);
  }
  await run('ip', ['-n', vpc.netns, 'link', 'set', vpc.nsIf, 'up']);
  await run('ip', ['-n', vpc.netns, 'route', 'replace', 'default', 'via', vpc.gateway, 'dev', vpc.nsIf]);
}

/**
 * Creates (or completes) the lab's network. Idempotent. `record` is awaited
 * before each resource is created so a crash half-way leaves nothing unrecorded.
 */
export async function applyNetwork(plan: NetworkPlan, record: (r: NetworkResource) => Promise<void>): Promise<void> {
  if (plan.mode !== 'netns') return;
  for (const vpc of plan.vpcs) await applyVpc(vpc, record);

  const forwarding = (await fs.readFile('/proc/sys/net/ipv4/ip_forward', 'utf8')).trim();
  if (forwarding !== '1') {
    await record({ kind: 'sysctl', key: 'net.ipv4.ip_forward', previous: forwarding });
    await run('sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1']);
  }

  await record({ kind: 'iptables-chain', table: FILTER, chain: plan.chain, jumpFrom: ['FORWARD'], comment: plan.comment });
  if (!(await chainExists(plan.chain))) await run('iptables', ['-t', FILTER, '-N', plan.chain]);
  await run('iptables', ['-t', FILTER, '-F', plan.chain]);
  for (const rule of chainRules(plan)) await run('iptables', ['-t', FILTER, '-A', plan.chain, ...rule]);
  const jump = ['FORWARD', '-m', 'comment', '--comment', plan.comment, '-j', plan.chain];
  if (!(await ok('iptables', ['-t', FILTER, '-C', ...jump]))) await run('iptables', ['-t', FILTER, '-I', ...jump.slice(0, 1), '1', ...jump.slice(1)]);
}

async function removeResource(r: NetworkResource): Promise<void> {
  switch (r.kind) {
    case 'netns':
      // Deleting the namespace also deletes the veth end inside it, and so its host peer.
      if (await netnsExists(r.name)) await run('ip', ['netns', 'del', r.name]);
      return;
    case 'link':
      if (await linkExists(r.name)) await run('ip', ['link', 'del', r.name]);
      return;
    case 'iptables-chain': {
      for (const from of r.jumpFrom) {
        const jump = [from, '-m', 'comment', '--comment', r.comment, '-j', r.chain];
        while (await ok('iptables', ['-t', r.table, '-C', ...jump])) await run('iptables', ['-t', r.table, '-D', ...jump]);
      }
      if (await ok('iptables', ['-t', r.table, '-S', r.chain])) {
        await run('iptables', ['-t', r.table, '-F', r.chain]);
        await run('iptables', ['-t', r.table, '-X', r.chain]);
      }
      return;
    }
    case 'sysctl':
      // Forwarding is shared by every lab on the machine: the last one down restores it.
      if ((await run('iptables', ['-t', FILTER, '-S'])).stdout.split('\n').some((l) => /^-N OCMLAB-/.test(l))) return;
      await run('sysctl', ['-q', '-w', `${r.key}=${r.previous}`]);
      return;
  }
}

/** Removes recorded resources, newest first; ones already gone are fine. */
export async function teardownNetwork(resources: NetworkResource[]): Promise<void> {
  const errors: string[] = [];
  for (const r of [...resources].reverse()) {
    try {
      await removeResource(r);
    } catch (err) {
      errors.push((err as Error).message);
    }
  }
  if (errors.length) throw new Error(`could not remove every network resource:\n${errors.join('\n')}`);
}

/** Namespaces, links and chains named for a lab, found on the machine (for `down` without state). */
export async function findLeftovers(labName: string): Promise<NetworkResource[]> {
  const found: NetworkResource[] = [];
  const probe = await probeNetworkCapability();
  if (!probe.canIsolate) return found;
  const nsPrefix = netnsPrefixOf(labName);
  for (const line of (await run('ip', ['netns', 'list'])).stdout.split('\n')) {
    const name = line.split(' ')[0] ?? '';
    if (name.startsWith(nsPrefix) && !name.slice(nsPrefix.length).includes('.')) found.push({ kind: 'netns', name });
  }
  const ifPrefix = interfacePrefix(labName);
  const links = JSON.parse((await run('ip', ['-j', 'link', 'show'])).stdout || '[]') as { ifname?: string }[];
  for (const l of links) if (l.ifname && new RegExp(`^${ifPrefix}\\d+h$`).test(l.ifname)) found.push({ kind: 'link', name: l.ifname });
  const chain = chainName(labName);
  if (await chainExists(chain)) found.push({ kind: 'iptables-chain', table: FILTER, chain, jumpFrom: ['FORWARD'], comment: ruleComment(labName) });
  return found;
}

/** Whether everything the plan needs for isolation is in place. */
export async function networkHealth(plan: NetworkPlan): Promise<{ enforced: boolean; problems: string[] }> {
  if (plan.mode !== 'netns') return { enforced: false, problems: ['loopback mode: no network namespaces'] };
  const problems: string[] = [];
  for (const vpc of plan.vpcs) {
    if (!(await netnsExists(vpc.netns))) problems.push(`network namespace ${vpc.netns} is missing`);
    else if (!(await linkExists(vpc.hostIf))) problems.push(`link ${vpc.hostIf} of ${vpc.name} is missing`);
  }
  if (!(await chainExists(plan.chain))) problems.push(`iptables chain ${plan.chain} is missing`);
  else if (!(await ok('iptables', ['-t', FILTER, '-C', 'FORWARD', '-m', 'comment', '--comment', plan.comment, '-j', plan.chain]))) {
    problems.push(`FORWARD does not jump to ${plan.chain}`);
  }
  if ((await fs.readFile('/proc/sys/net/ipv4/ip_forward', 'utf8')).trim() !== '1') problems.push('net.ipv4.ip_forward is off (spokes cannot reach the hub)');
  return { enforced: problems.length === 0, problems };
}
