import path from 'node:path';
import { clusterKubeconfigFile, labDir, labKubeconfigFile } from '../../paths.js';
import type { ExistingClusterSpec } from './contexts.js';

interface ExistingClusterPlan {
  name: string;
  context: string;
  hub: boolean;
  /** The API server the context names; null when the kubeconfig was not read (down). */
  server: string | null;
  /** How the lab authenticates with the context: its client certificate or its token. */
  credentials: 'client certificate' | 'token' | null;
}

export interface ExistingLabPlan {
  lab: string;
  runtime: 'existing';
  labDir: string;
  /** The user's kubeconfig the contexts are in. */
  kubeconfig: string;
  /** `flags`: --kubeconfig/--hub-context/--spoke-context; `recorded`: the contexts the lab was brought up with. */
  contextsFrom: 'flags' | 'recorded';
  clusters: ExistingClusterPlan[];
  /** What `up` checks before it writes anything; it creates and deletes no cluster. */
  checks: string[];
  /** Spokes the lab has and no longer gets: OCM lets them go before the lab forgets them. */
  removedSpokes: string[];
  /** What `up` writes (credentials from the user's kubeconfig, 0600). */
  files: string[];
}

export interface ExistingPlanInput {
  /** Where labs live ($OCM_LAB_HOME, $XDG_STATE_HOME): the environment the lab's paths are worked out in. */
  env: NodeJS.ProcessEnv;
  kubeconfig: string;
  contextsFrom: ExistingLabPlan['contextsFrom'];
  specs: readonly ExistingClusterSpec[];
  /** Cluster name → what its context resolved to (nothing secret). */
  resolved: ReadonlyMap<string, { server: string; credentials: 'client certificate' | 'token' }>;
  /** The clusters the lab recorded, when it is up. */
  previous: readonly ExistingClusterSpec[] | null;
  /** True when the recorded hub is the asked hub, in the same kubeconfig: the lab installed that hub, so it is not "another OCM hub". */
  hubIsOurs: boolean;
}

/** What `up --runtime existing` would check and write. Pure. */
export function planExistingLab(labName: string, input: ExistingPlanInput): ExistingLabPlan {
  const hub = input.specs.find((s) => s.hub);
  const dir = labDir(labName, input.env);
  return {
    lab: labName,
    runtime: 'existing',
    labDir: dir,
    kubeconfig: input.kubeconfig,
    contextsFrom: input.contextsFrom,
    clusters: input.specs.map((s) => ({
      name: s.name,
      context: s.context,
      hub: s.hub,
      server: input.resolved.get(s.name)?.server ?? null,
      credentials: input.resolved.get(s.name)?.credentials ?? null,
    })),
    checks: [
      `every context answers GET /readyz with ok (${input.specs.map((s) => s.context).join(', ')})`,
      ...(input.previous ? ['the hub is the one the lab was brought up with (the hub of a lab cannot change)'] : []),
      input.hubIsOurs
        ? `context ${hub?.context ?? '?'}: the lab installed its OCM hub before (repaired, not refused)`
        : `context ${hub?.context ?? '?'} runs no other OCM hub (no CRD clustermanagers.operator.open-cluster-management.io)`,
    ],
    removedSpokes: (input.previous ?? []).filter((p) => !p.hub && !input.specs.some((s) => s.name === p.name)).map((p) => p.name),
    files: [path.join(dir, 'state.json'), labKubeconfigFile(labName, input.env), ...input.specs.map((s) => clusterKubeconfigFile(labName, s.name, input.env))],
  };
}

export interface ExistingDownPlan {
  lab: string;
  runtime: 'existing';
  labDir: string;
  /** False: the lab is not recorded; down does nothing. */
  exists: boolean;
  kubeconfig: string | null;
  /** The clusters stay; what up installed on them is taken off first (see installs). */
  clusters: ExistingClusterPlan[];
  labDirectory: 'removed' | 'kept';
}

/** What `down` would do to a lab on existing clusters. Pure. */
export function planExistingDown(
  labName: string,
  env: NodeJS.ProcessEnv,
  recorded: { kubeconfig: string; clusters: readonly ExistingClusterSpec[] } | null,
  keepData: boolean,
): ExistingDownPlan {
  return {
    lab: labName,
    runtime: 'existing',
    labDir: labDir(labName, env),
    exists: recorded !== null,
    kubeconfig: recorded?.kubeconfig ?? null,
    clusters: (recorded?.clusters ?? []).map((s) => ({ name: s.name, context: s.context, hub: s.hub, server: null, credentials: null })),
    labDirectory: keepData ? 'kept' : 'removed',
  };
}
