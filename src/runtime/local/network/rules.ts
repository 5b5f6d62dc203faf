import { hostChainNames, type NetworkPlan } from './plan.js';

/** One chain of ours in the filter table, the built-in chains that jump to it, and its rules. */
export interface ChainSpec {
  table: 'filter';
  chain: string;
  jumpFrom: string[];
  rules: string[][];
}

// Written the way `iptables -S` prints rules back, so a listing can be compared with them directly.
const ESTABLISHED = ['-m', 'conntrack', '--ctstate', 'RELATED,ESTABLISHED'];

/**
 * The VPC rule, as FORWARD rules that only ever name this lab's host links (so the
 * chain never decides about anybody else's traffic): replies flow back into every
 * VPC, spokes open connections to the hub VPC, and everything else that leaves or
 * enters a VPC through the host is dropped — hub→spoke, spoke→spoke and VPC→outside.
 * The ACCEPTs are explicit because FORWARD's policy may be DROP (Docker sets it).
 */
export function forwardRules(plan: NetworkPlan): string[][] {
  const tag = ['-m', 'comment', '--comment', plan.comment];
  const hub = plan.vpcs.find((v) => v.hub);
  const rules: string[][] = [];
  for (const vpc of plan.vpcs) rules.push(['-o', vpc.hostIf, ...ESTABLISHED, ...tag, '-j', 'ACCEPT']);
  if (hub) {
    for (const spoke of plan.vpcs.filter((v) => !v.hub)) rules.push(['-i', spoke.hostIf, '-o', hub.hostIf, ...tag, '-j', 'ACCEPT']);
  }
  for (const vpc of plan.vpcs) rules.push(['-i', vpc.hostIf, ...tag, '-j', 'DROP']);
  for (const vpc of plan.vpcs) rules.push(['-o', vpc.hostIf, ...tag, '-j', 'DROP']);
  return rules;
}

/**
 * The host's own connections to clusters go OUTPUT → veth → namespace and back
 * through INPUT, never through FORWARD; these keep them open on machines whose
 * INPUT/OUTPUT policy is restrictive. New connections from a VPC to the host are
 * left to the machine's own policy.
 */
export function hostRules(plan: NetworkPlan): { input: string[][]; output: string[][] } {
  const tag = ['-m', 'comment', '--comment', plan.comment];
  return {
    input: plan.vpcs.map((vpc) => ['-i', vpc.hostIf, ...ESTABLISHED, ...tag, '-j', 'ACCEPT']),
    output: plan.vpcs.map((vpc) => ['-o', vpc.hostIf, ...tag, '-j', 'ACCEPT']),
  };
}

/** Every chain the lab owns, in the order they are created. */
export function labChains(plan: NetworkPlan): ChainSpec[] {
  const host = hostRules(plan);
  const names = hostChainNames(plan.labName);
  return [
    { table: 'filter', chain: plan.chain, jumpFrom: ['FORWARD'], rules: forwardRules(plan) },
    { table: 'filter', chain: names.input, jumpFrom: ['INPUT'], rules: host.input },
    { table: 'filter', chain: names.output, jumpFrom: ['OUTPUT'], rules: host.output },
  ];
}

function jumpRule(comment: string, chain: string): string[] {
  return ['-m', 'comment', '--comment', comment, '-j', chain];
}

/** Splits one line of `iptables -S` output into arguments (double quotes group, backslash escapes). */
export function splitRuleLine(line: string): string[] {
  const args: string[] = [];
  let current = '';
  let quoted = false;
  let inArg = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i] as string;
    if (ch === '\\' && i + 1 < line.length) {
      current += line[++i];
      inArg = true;
    } else if (ch === '"') {
      quoted = !quoted;
      inArg = true;
    } else if (ch === ' ' && !quoted) {
      if (inArg) args.push(current);
      current = '';
      inArg = false;
    } else {
      current += ch;
      inArg = true;
    }
  }
  if (inArg) args.push(current);
  return args;
}

function quoteArg(arg: string): string {
  return /^[\w.,:/+=@%-]+$/.test(arg) ? arg : `"${arg.replace(/(["\\])/g, '\\$1')}"`;
}

/** Rules of `iptables -S` output (`-A <chain> …`) that jump to `target`, as they were printed. */
export function rulesJumpingTo(listing: string, target: string): { from: string; line: string }[] {
  const found: { from: string; line: string }[] = [];
  for (const line of listing.split('\n')) {
    const args = splitRuleLine(line.trim());
    if (args[0] !== '-A' || !args[1]) continue;
    const j = args.indexOf('-j');
    const g = args.indexOf('-g');
    if ((j >= 0 && args[j + 1] === target) || (g >= 0 && args[g + 1] === target)) found.push({ from: args[1], line: line.trim() });
  }
  return found;
}

/** The rules of `chain` in an `iptables -S` listing, as argument lists without `-A <chain>`. */
export function rulesOf(listing: string, chain: string): string[][] {
  return listing
    .split('\n')
    .map((line) => splitRuleLine(line.trim()))
    .filter((args) => args[0] === '-A' && args[1] === chain)
    .map((args) => args.slice(2));
}

export function chainExistsIn(listing: string, chain: string): boolean {
  return listing.split('\n').some((line) => {
    const args = splitRuleLine(line.trim());
    return args[0] === '-N' && args[1] === chain;
  });
}

/**
 * `iptables-restore --noflush` input that (re)creates each chain with exactly its
 * rules in one transaction — declaring a chain that exists flushes it, so there is
 * no moment with half the rules — and adds the jumps that `listing` lacks, at the top.
 */
export function applyScript(chains: ChainSpec[], comment: string, listing: string): string {
  const lines = ['*filter'];
  for (const c of chains) lines.push(`:${c.chain} - [0:0]`);
  for (const c of chains) for (const rule of c.rules) lines.push(['-A', c.chain, ...rule].map(quoteArg).join(' '));
  for (const c of chains) {
    const present = new Set(rulesJumpingTo(listing, c.chain).map((r) => r.from));
    for (const from of c.jumpFrom) if (!present.has(from)) lines.push(['-I', from, '1', ...jumpRule(comment, c.chain)].map(quoteArg).join(' '));
  }
  lines.push('COMMIT', '');
  return lines.join('\n');
}

/**
 * `iptables-restore --noflush` input that deletes every rule jumping to each
 * chain (wherever it is, so nothing keeps the chain referenced) and then the
 * chains themselves, in one transaction; null when `listing` shows none of them.
 */
export function removalScript(table: string, chains: string[], listing: string): string | null {
  chains = [...new Set(chains)];
  const lines = [`*${table}`];
  for (const chain of chains) for (const j of rulesJumpingTo(listing, chain)) lines.push(`-D ${j.line.slice(3)}`);
  const existing = chains.filter((c) => chainExistsIn(listing, c));
  for (const chain of existing) lines.push(`-F ${chain}`);
  for (const chain of existing) lines.push(`-X ${chain}`);
  if (lines.length === 1) return null;
  lines.push('COMMIT', '');
  return lines.join('\n');
}
