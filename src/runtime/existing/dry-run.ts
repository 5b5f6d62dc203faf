import path from 'node:path';
import type { LabConfig } from '../../config/index.js';
import { InvalidInputError } from '../../errors.js';
import type { PlanOptions, RuntimePlan } from '../types.js';
import { clusterSpecs, resolveContext, type ExistingClustersInput } from './contexts.js';
import { planExistingDown, planExistingLab, type ExistingDownPlan, type ExistingLabPlan } from './plan.js';
import { readExistingState } from './state.js';

/**
 * `up --dry-run` and `down --dry-run` on existing clusters. Reads the user's
 * kubeconfig (so a context that `up` would refuse is refused here too) and the
 * lab's state; asks no cluster anything and writes nothing.
 */
export async function existingRuntimePlan(
  config: LabConfig,
  options: PlanOptions,
  input: ExistingClustersInput | undefined,
  steps: string[],
): Promise<RuntimePlan> {
  const previous = await readExistingState(config.name);
  if (options.action === 'down') {
    const plan = planExistingDown(config.name, process.env, previous?.runtimeState ?? null, !!options.keepData);
    return { runtime: 'existing', steps: [], plan, text: renderExistingDownPlan(plan) };
  }
  if (!input && !previous) throw new InvalidInputError('--runtime existing needs --kubeconfig FILE, --hub-context CTX and --spoke-context CTX (one per spoke)');
  const kubeconfig = input ? path.resolve(input.kubeconfig) : previous!.runtimeState.kubeconfig;
  const specs = input ? clusterSpecs(input) : previous!.runtimeState.clusters;
  const resolved = new Map<string, { server: string; credentials: 'client certificate' | 'token' }>();
  const known = options.facts?.contexts as Record<string, { server: string; credentials: 'client certificate' | 'token' }> | undefined;
  for (const spec of specs) {
    if (known?.[spec.context]) {
      resolved.set(spec.name, known[spec.context]!);
      continue;
    }
    const { entry } = await resolveContext(kubeconfig, spec.context);
    resolved.set(spec.name, { server: entry.server, credentials: entry.clientCertPem ? 'client certificate' : 'token' });
  }
  const hub = specs.find((s) => s.hub);
  const hubIsOurs = !!previous?.runtimeState.clusters.some((s) => s.hub && s.context === hub?.context) && previous?.runtimeState.kubeconfig === kubeconfig;
  const plan = planExistingLab(config.name, {
    env: process.env,
    kubeconfig,
    contextsFrom: input ? 'flags' : 'recorded',
    specs,
    resolved,
    previous: previous?.runtimeState.clusters ?? null,
    hubIsOurs,
  });
  return { runtime: 'existing', steps, plan, text: renderExistingPlan(plan) };
}

function renderExistingPlan(plan: ExistingLabPlan): string {
  const out: string[] = [];
  out.push(
    `lab '${plan.lab}' on existing clusters: would use these contexts of ${plan.kubeconfig} ` +
      `(${plan.contextsFrom === 'flags' ? 'from the flags' : 'as the lab recorded them'}); no cluster is created or deleted`,
  );
  out.push('');
  out.push('Clusters:');
  const width = Math.max(...plan.clusters.map((c) => c.name.length));
  for (const c of plan.clusters) {
    out.push(`  ${c.name.padEnd(width)}  ${c.hub ? 'hub  ' : 'spoke'}  context=${c.context}  server=${c.server ?? '?'}  credentials: ${c.credentials ?? '?'}`);
  }
  out.push('');
  out.push('Checks before anything is written:');
  for (const check of plan.checks) out.push(`  ${check}`);
  if (plan.removedSpokes.length) {
    out.push('');
    out.push(`Spokes no longer given, let go by OCM and forgotten: ${plan.removedSpokes.join(', ')}`);
  }
  out.push('');
  out.push('Files (credentials from your kubeconfig, mode 0600):');
  for (const f of plan.files) out.push(`  ${f}`);
  return out.join('\n');
}

export function renderExistingDownPlan(plan: ExistingDownPlan): string {
  if (!plan.exists) return `lab '${plan.lab}' on existing clusters: not recorded (no state in ${plan.labDir}); down would do nothing`;
  const out: string[] = [];
  out.push(
    `lab '${plan.lab}' on existing clusters (${plan.kubeconfig ?? '?'}): ` +
      'the clusters stay; what up installed is taken off them (see below), then the lab is forgotten',
  );
  out.push('');
  out.push('Clusters:');
  const width = Math.max(...plan.clusters.map((c) => c.name.length));
  for (const c of plan.clusters) out.push(`  ${c.name.padEnd(width)}  ${c.hub ? 'hub  ' : 'spoke'}  context=${c.context}`);
  out.push('');
  out.push(`Lab directory ${plan.labDir}: ${plan.labDirectory === 'kept' ? 'kept (--keep-data)' : 'removed'}`);
  return out.join('\n');
}
