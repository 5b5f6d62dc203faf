import type { LabConfig } from '../../config/index.js';
import { labDir } from '../../paths.js';
import type { PlanOptions, RuntimePlan } from '../types.js';
import { planInput } from './lab-network.js';
import {
  planLoopback,
  planNetwork,
  planNetworkIn,
  probeNetworkCapability,
  reconcilePlanClusters,
  type NetworkPlan,
  type NetworkResource,
} from './network/index.js';
import { planLocalDown, planLocalLab, type LocalDownPlan, type LocalLabPlan } from './plan-lab.js';
import { readLocalState, type LocalLabState } from './state.js';

/**
 * The network `up` would use, decided as the VPC networks step decides it, but
 * only by reading: the plan kept in the lab's state, else a range free on this
 * machine (its routes are read), else loopback addresses when namespaces cannot be made.
 */
async function networkUpWouldUse(
  config: LabConfig,
  state: LocalLabState | null,
  facts: { freeCidr?: string } = {},
): Promise<{ network: NetworkPlan; why: string }> {
  if (state?.runtimeState.network) {
    return { network: reconcilePlanClusters(state.runtimeState.network, planInput(config)), why: 'kept from the running lab (addresses never move)' };
  }
  const why = config.network.cidr ? 'network.cidr of the lab file' : 'the first candidate range no route or address of this machine uses';
  if (facts.freeCidr) return { network: planNetworkIn(planInput(config), config.network.cidr ?? facts.freeCidr), why };
  const capability = await probeNetworkCapability();
  if (!capability.canIsolate) {
    return {
      network: planLoopback(planInput(config)),
      why: `cannot create network namespaces (${capability.reason ?? 'unknown reason'}): loopback addresses, isolation NOT enforced`,
    };
  }
  return { network: await planNetwork(planInput(config)), why };
}

/** `up --dry-run` and `down --dry-run` on the local runtime. */
export async function localRuntimePlan(config: LabConfig, options: PlanOptions, steps: string[]): Promise<RuntimePlan> {
  const dir = labDir(config.name);
  const state = await readLocalState(config.name);
  if (options.action === 'down') {
    const plan = planLocalDown(config.name, dir, state, !!options.keepData);
    return { runtime: 'local', steps: [], plan, text: renderLocalDownPlan(plan) };
  }
  const freeCidr = typeof options.facts?.freeCidr === 'string' ? options.facts.freeCidr : undefined;
  const { network, why } = await networkUpWouldUse(config, state, { freeCidr });
  const plan = planLocalLab(config, { labDir: dir, network, networkWhy: why });
  return { runtime: 'local', steps, plan, text: renderLocalPlan(plan) };
}

function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** `up --dry-run` as text: the network, each cluster's processes, the binaries, then every command line. */
export function renderLocalPlan(plan: LocalLabPlan): string {
  const out: string[] = [];
  const net = plan.network;
  out.push(`lab '${plan.lab}' on local (Kubernetes ${plan.kubernetesVersion}, OCM ${plan.ocmVersion}): would create (or keep, when it already exists)`);
  out.push('');
  out.push(net.mode === 'netns' ? `Network namespaces in ${net.cidr} (${net.why}):` : `Loopback addresses in ${net.cidr} (${net.why}):`);
  for (const v of net.vpcs) {
    out.push(
      `  ${v.name}${v.hub ? ' (hub VPC)' : ''}  ${v.netns ? `netns=${v.netns}  ` : ''}subnet=${v.subnet}` +
        `${v.gateway ? `  gateway=${v.gateway} on ${v.hostInterface} (peer ${v.namespaceInterface} in the namespace)` : ''}`,
    );
    for (const c of v.clusters) out.push(`    ${c.name}  ${c.address}${c.podCidr ? `  pods ${c.podCidr}` : ''}`);
    for (const r of v.routes) out.push(`    route ${r.type === 'unreachable' ? `unreachable ${r.dst}` : r.dst}: ${r.why}`);
  }
  for (const chain of net.iptables) {
    out.push(`  iptables -t ${chain.table} chain ${chain.chain} (jumped to from ${chain.jumpFrom.join(', ')}):`);
    for (const rule of chain.rules) out.push(`    -A ${chain.chain} ${rule.map(shellWord).join(' ')}`);
  }
  out.push('');
  out.push('Clusters (a process each for etcd, kube-apiserver, kube-controller-manager and the nodelet, in the VPC):');
  for (const c of plan.clusters) {
    out.push(`  ${c.name}${c.hub ? ' (hub)' : ''}  vpc=${c.vpc}  api=${c.apiServer}  node=${c.node}${c.podCidr ? `  pods=${c.podCidr}` : ''}`);
    const width = Math.max(...c.processes.map((p) => p.name.length));
    for (const p of c.processes) out.push(`    ${p.name.padEnd(width)}  ${p.listens.join(', ')}`);
  }
  out.push('');
  out.push('Supervisor (one per lab, started after the nodelets; restarts a process above that dies: at once, then after 10 s doubling to 5 min):');
  out.push(`  ${shellWord(plan.supervisor.binary)} ${plan.supervisor.args.map(shellWord).join(' ')}  log=${plan.supervisor.logFile}`);
  out.push('');
  out.push('Binaries (from --bin-dir, PATH or the cache; else a release download or a build from the Go module proxy):');
  const groups = new Map<string, string[]>();
  for (const b of plan.binaries) groups.set(`${b.version} (${b.module})`, [...(groups.get(`${b.version} (${b.module})`) ?? []), b.name]);
  for (const [what, names] of groups) out.push(`  ${names.join(', ')}  ${what}`);
  out.push('');
  out.push(`Files in ${plan.labDir}: state.json, kubeconfig, clusters/<name>/{pki,etcd,logs,run,kubeconfigs,nodelet}`);
  for (const c of plan.clusters) {
    out.push('');
    out.push(`--- ${c.name}: commands`);
    for (const p of c.processes)
      out.push([...Object.entries(p.env ?? {}).map(([k, v]) => `${k}=${v}`), ...p.prefix, p.binary, ...p.args].map(shellWord).join(' '));
  }
  return out.join('\n');
}

function describeResource(r: NetworkResource): string {
  switch (r.kind) {
    case 'netns':
      return `network namespace ${r.name}`;
    case 'link':
      return `link ${r.name}`;
    case 'iptables-chain':
      return `iptables -t ${r.table} chain ${r.chain} (and its jumps from ${r.jumpFrom.join(', ')})`;
    case 'sysctl':
      return `sysctl ${r.key} back to ${r.previous}`;
  }
}

/** `down --dry-run` as text. */
export function renderLocalDownPlan(plan: LocalDownPlan): string {
  const out: string[] = [];
  out.push(
    `lab '${plan.lab}' on local: ` +
      `${plan.exists ? 'would remove (when it exists)' : `is not up (no state in ${plan.labDir}); down would only remove leftovers found by name`}`,
  );
  out.push('');
  out.push('Supervisor stopped first, so that it restarts nothing stopped below (when its pid file names a running process):');
  out.push(`  ${plan.supervisor.pidFile}`);
  if (plan.processes.length) {
    out.push('');
    out.push('Processes stopped (those whose pid file names a running process):');
    const width = Math.max(...plan.processes.map((p) => `${p.cluster}/${p.name}`.length));
    for (const p of plan.processes) out.push(`  ${`${p.cluster}/${p.name}`.padEnd(width)}  ${p.pidFile}`);
  }
  if (plan.networkResources.length) {
    out.push('');
    out.push('Network resources the lab recorded (removed last created first):');
    for (const r of [...plan.networkResources].reverse()) out.push(`  ${describeResource(r)}`);
  }
  out.push('');
  out.push(
    `Leftovers looked for by name: network namespaces ${plan.leftovers.netns}, links ${plan.leftovers.links}, ` +
      `iptables chains ${plan.leftovers.chains.join(', ')}`,
  );
  out.push('');
  out.push(`Lab directory ${plan.labDir}: ${plan.labDirectory === 'kept' ? 'kept (--keep-data)' : 'removed'}`);
  return out.join('\n');
}
