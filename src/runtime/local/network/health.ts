import { run } from '../../../util/exec.js';
import { IP_FORWARD } from './apply.js';
import { iptablesListing, listNetns, readLink, readSysctl, succeeds, type LinkInfo } from './machine.js';
import type { NetworkPlan, VpcPlan } from './plan.js';
import { chainExistsIn, labChains, rulesJumpingTo, rulesOf } from './rules.js';
import { vpcRoutes, vpcSysctls } from './vpc-routes.js';

function addressesOf(link: LinkInfo): string[] {
  return (link.addr_info ?? []).filter((a) => a.family === 'inet').map((a) => `${a.local}/${a.prefixlen}`);
}

/** A veth end is usable when it is administratively up and its peer is too. */
function isUp(link: LinkInfo): boolean {
  return link.operstate === 'UP' || (link.flags ?? []).includes('LOWER_UP');
}

async function vpcProblems(plan: NetworkPlan, vpc: VpcPlan, namespaces: string[]): Promise<string[]> {
  if (!namespaces.includes(vpc.netns)) return [`network namespace ${vpc.netns} of ${vpc.name} is missing`];
  const problems: string[] = [];
  const host = await readLink(vpc.hostIf);
  if (!host) problems.push(`link ${vpc.hostIf} of ${vpc.name} is missing`);
  else {
    if (!isUp(host)) problems.push(`link ${vpc.hostIf} of ${vpc.name} is ${host.operstate ?? 'not up'}`);
    if (!addressesOf(host).includes(`${vpc.gateway}/${vpc.prefixLength}`))
      problems.push(`link ${vpc.hostIf} lacks the gateway address ${vpc.gateway}/${vpc.prefixLength}`);
  }
  const inside = await readLink(vpc.nsIf, vpc.netns);
  if (!inside) problems.push(`link ${vpc.nsIf} in ${vpc.netns} is missing`);
  else {
    if (!isUp(inside)) problems.push(`link ${vpc.nsIf} in ${vpc.netns} is ${inside.operstate ?? 'not up'}`);
    const have = addressesOf(inside);
    for (const [cluster, address] of Object.entries(vpc.clusterAddresses)) {
      if (!have.includes(`${address}/${vpc.prefixLength}`)) problems.push(`address ${address} of ${cluster} is missing in ${vpc.netns}`);
    }
    const routes = JSON.parse((await run('ip', ['-n', vpc.netns, '-j', 'route', 'show'])).stdout || '[]') as {
      dst?: string;
      type?: string;
      gateway?: string;
    }[];
    if (!routes.some((r) => r.dst === 'default' && r.gateway === vpc.gateway)) problems.push(`${vpc.netns} has no default route via ${vpc.gateway}`);
    for (const want of vpcRoutes(plan, vpc)) {
      const found = routes.some((r) => r.dst === want.dst && (r.type ?? 'unicast') === want.type);
      if (!found) problems.push(`${vpc.netns} lacks its ${want.type} route to ${want.dst} (${want.why})`);
    }
    const sysctls = vpcSysctls(vpc);
    const values = (await run('ip', ['netns', 'exec', vpc.netns, 'sysctl', '-n', ...Object.keys(sysctls)], { allowFailure: true })).stdout.split('\n');
    Object.entries(sysctls).forEach(([key, want], i) => {
      if (values[i]?.trim() !== want) problems.push(`${key} is not ${want} in ${vpc.netns} (pods behind it are unreachable)`);
    });
  }
  return problems;
}

/**
 * Whether everything the plan needs for isolation is in place: namespaces,
 * links up with their addresses, default routes, every rule of ours and the
 * jumps to our chains (from one listing), and forwarding on.
 */
export async function networkHealth(plan: NetworkPlan): Promise<{ enforced: boolean; problems: string[] }> {
  if (plan.mode !== 'netns') return { enforced: false, problems: ['loopback mode: no network namespaces, nothing is isolated'] };
  const problems: string[] = [];
  const namespaces = await listNetns();
  for (const vpc of plan.vpcs) problems.push(...(await vpcProblems(plan, vpc, namespaces)));
  const listing = await iptablesListing('filter');
  for (const c of labChains(plan)) {
    if (!chainExistsIn(listing, c.chain)) {
      problems.push(`iptables chain ${c.chain} is missing`);
      continue;
    }
    const jumpsFrom = new Set(rulesJumpingTo(listing, c.chain).map((j) => j.from));
    for (const from of c.jumpFrom) if (!jumpsFrom.has(from)) problems.push(`${from} does not jump to ${c.chain}`);
    const listed = rulesOf(listing, c.chain).map((r) => r.join('\0'));
    if (listed.length > c.rules.length) problems.push(`chain ${c.chain} holds ${listed.length} rules, ${c.rules.length} expected: something else added rules`);
    for (const rule of c.rules) {
      // A rule printed differently from how we wrote it (another iptables version) is confirmed by iptables itself.
      if (listed.includes(rule.join('\0'))) continue;
      if (!(await succeeds('iptables', ['-t', c.table, '-C', c.chain, ...rule]))) problems.push(`rule missing in ${c.chain}: ${rule.join(' ')}`);
    }
  }
  if ((await readSysctl(IP_FORWARD)) !== '1') problems.push(`${IP_FORWARD} is off (spokes cannot reach the hub)`);
  return { enforced: problems.length === 0, problems };
}
