import type { LabConfig } from '../../config/index.js';
import { readLabState } from '../../config/lab-state.js';
import {
  labRuntimeName,
  resolveRuntime,
  runtimeDefinition,
  runtimeNamed,
  type ResolvedRuntime,
  type RuntimeChoice,
  type RuntimeSelection,
} from '../../runtime/registry.js';
import { renderPreflight, type PreflightCheck } from '../../runtime/preflight.js';
import type { PlanOptions, Runtime, RuntimeName, RuntimePlan } from '../../runtime/types.js';
import { planArtifacts, renderArtifacts, type ArtifactsDryRun } from './artifacts.js';
import { planInstalls, renderInstalls, type InstallsPlan } from './installs.js';

/** `up --dry-run` / `down --dry-run` as `--output json` prints it: keys in this order, always. */
export interface LabDryRun {
  lab: string;
  action: PlanOptions['action'];
  /** The lab is up on this runtime (its state says so): `up` repairs it, `down` removes it. */
  exists: boolean;
  runtime: { name: RuntimeName; reason: string; steps: string[] };
  /** The runtime's own plan (clusters, networks, processes or containers, images). */
  plan: object;
  installs: InstallsPlan;
  /** `up`: where each artifact comes from on the path decided, and the facts that decided it. */
  artifacts?: ArtifactsDryRun;
  /** `up`: what up checks of the machine before it creates anything, each ok, warning or stop (exit 3). */
  preflight?: PreflightCheck[];
}

/** Puts a runtime's plan and the installs together. Pure. */
export function labDryRun(
  config: LabConfig,
  action: PlanOptions['action'],
  exists: boolean,
  resolved: ResolvedRuntime,
  runtime: RuntimePlan,
  /** The runtime's clusters outlive the lab (`Runtime.keepsClusters`): `down` takes the installs off them instead of deleting them. */
  clustersStay = false,
  artifacts?: ArtifactsDryRun,
  preflight?: PreflightCheck[],
): { dryRun: LabDryRun; text: string } {
  const installs = planInstalls(config);
  const dryRun: LabDryRun = {
    lab: config.name,
    action,
    exists,
    runtime: { name: resolved.name, reason: resolved.reason, steps: runtime.steps },
    plan: runtime.plan,
    installs,
    ...(artifacts ? { artifacts } : {}),
    ...(preflight ? { preflight } : {}),
  };
  const parts = [runtime.text];
  if (action === 'up') parts.push(`Steps of up: ${[...runtime.steps, ...installs.steps].join(' -> ')}`);
  parts.push(action === 'down' && !exists ? 'Installs: nothing to take off (the lab is not up)' : renderInstalls(installs, action, clustersStay));
  if (artifacts) parts.push(renderArtifacts(artifacts));
  if (preflight) parts.push(renderPreflight(preflight));
  return { dryRun, text: `${parts.join('\n\n')}\n` };
}

/**
 * `--dry-run`: resolves the runtime as up/down would, asks it for its plan, adds the installs and, for `up`, the
 * artifacts (`artifactFlags`: up's --artifacts and --download). Creates nothing.
 */
export async function planLab(
  choice: RuntimeChoice,
  config: LabConfig,
  options: PlanOptions,
  selection: RuntimeSelection = {},
  artifactFlags: { artifacts?: string; download?: boolean } = {},
): Promise<{ dryRun: LabDryRun; text: string }> {
  const resolved = await resolveRuntime(choice, config.name);
  const runtime = await runtimeNamed(resolved.name, { labName: config.name, ...selection });
  const plan = await runtime.plan(config, options);
  const planned = plan.config ?? config;
  const artifacts = options.action === 'up' ? await planArtifacts(await runtimeDefinition(resolved.name), planned, artifactFlags, options.host) : undefined;
  const preflight = options.action === 'up' ? await preflightOf(runtime, planned, options) : undefined;
  return labDryRun(planned, options.action, (await labRuntimeName(config.name)) === resolved.name, resolved, plan, runtime.keepsClusters, artifacts, preflight);
}

/** The runtime's preflight for the clusters `up` would create (those the lab's state does not have yet). */
async function preflightOf(runtime: Runtime<any, any>, config: LabConfig, options: PlanOptions): Promise<PreflightCheck[]> {
  if (!runtime.preflight) return [];
  const running = new Set((await readLabState(config.name))?.config.clusters.map((c) => c.name) ?? []);
  return runtime.preflight(config, { ...options, newClusters: config.clusters.filter((c) => !running.has(c.name)).length });
}
