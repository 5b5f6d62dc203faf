import { rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { LabConfig } from '../config/index.js';
import type { Scenario } from './types.js';
import { MissingPrerequisiteError, NotFoundError, NotReadyError } from '../errors.js';
import { labPodImage, labStatus } from '../lab/lifecycle.js';
import { labKubeconfigFile } from '../paths.js';
import { ensureBinaries } from '../provision/index.js';
import { CLI_MAIN } from '../paths.js';

/** Everything a document's blocks run with. */
export interface ScenarioEnvironment {
  labName: string;
  /** The lab's kubeconfig, with one context per cluster named after it (hub, cluster1, …). */
  kubeconfig: string;
  /** Directories put first on PATH: the provisioned kubectl and an `ocm-lab` shim. */
  pathDirs: string[];
  /** Variables added to the runner's own environment (KUBECONFIG, OCM_LAB_NAME, …). */
  env: Record<string, string>;
  clusters: string[];
  addons: string[];
  /** What the lab reports it can do: `ocm-lab status -o json` → `capabilities`. */
  capabilities: string[];
  /** Removes what resolving created (the shim directory), at once when called: a hung-up tutorial exits right after. */
  dispose?: () => Promise<void>;
}

/** The full environment of a block: the runner's own, the lab's variables, the lab's tools first on PATH. */
export function blockEnvironment(environment: ScenarioEnvironment, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return {
    ...base,
    ...environment.env,
    KUBECONFIG: environment.kubeconfig,
    PATH: [...environment.pathDirs, base.PATH ?? '/usr/local/bin:/usr/bin:/bin'].join(path.delimiter),
  };
}

/**
 * Where the kubectl the blocks use lives. The lab's own provisioned kubectl
 * (same version as its clusters); adapt here if provisioning changes.
 */
async function kubectlDir(config: LabConfig): Promise<string> {
  const { kubectl } = await ensureBinaries(['kubectl'], { kubernetesVersion: config.kubernetesVersion });
  return path.dirname(kubectl);
}

/** A directory holding an `ocm-lab` script that runs this checkout's CLI with this Node. */
async function writeOcmLabShim(cliMain = CLI_MAIN): Promise<string> {
  try {
    await fs.access(cliMain);
  } catch {
    throw new MissingPrerequisiteError(`documents call 'ocm-lab', but ${cliMain} does not exist`, { hint: "run 'npm run build' first" });
  }
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-shim-'));
  await fs.writeFile(path.join(dir, 'ocm-lab'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(cliMain)} "$@"\n`, { mode: 0o755 });
  return dir;
}

/** Resolves a running lab into the environment its documents run in. */
export async function resolveScenarioEnvironment(config: LabConfig): Promise<ScenarioEnvironment> {
  const status = await labStatus(config);
  if (!status.exists || !status.kubeconfig) throw new NotFoundError(`lab '${config.name}' is not up`, { hint: "run 'ocm-lab up' first" });
  const down = status.clusters.filter((c) => !c.ready).map((c) => c.name);
  if (down.length)
    throw new NotReadyError(`lab '${config.name}' is not ready: ${down.join(', ')} not answering`, {
      hint: "see 'ocm-lab status'; 'ocm-lab up' repairs the lab",
    });
  const kubectl = await kubectlDir(config);
  const shimDir = await writeOcmLabShim();
  return {
    labName: config.name,
    kubeconfig: status.kubeconfig,
    pathDirs: [shimDir, kubectl],
    env: { OCM_LAB_NAME: config.name, OCM_LAB_IMAGE: await labPodImage(config), ...(config.source ? { OCM_LAB_CONFIG: config.source } : {}) },
    clusters: status.clusters.map((c) => c.name),
    addons: [...config.addons],
    capabilities: [...status.capabilities],
    dispose: async () => rmSync(shimDir, { recursive: true, force: true }),
  };
}

/** A document that names no cluster, addon or capability needs no lab. */
function requiresNothing(scenario: Pick<Scenario, 'requires'>): boolean {
  const { clusters, addons, capabilities } = scenario.requires;
  return !clusters.length && !addons.length && !capabilities.length;
}

/**
 * The environment `tutorial` runs a document in: the lab's; or, when the lab is not up and the
 * document requires nothing (a tour that brings the lab up itself, a document about the CLI),
 * one without a lab: KUBECONFIG names where the lab's kubeconfig will be, `ocm-lab` is on PATH
 * when this checkout is built, and no cluster, addon or capability is there.
 */
export async function resolveDocumentEnvironment(config: LabConfig, scenario: Scenario): Promise<ScenarioEnvironment> {
  try {
    return await resolveScenarioEnvironment(config);
  } catch (err) {
    if (!(err instanceof NotFoundError) || !requiresNothing(scenario)) throw err;
  }
  const shimDir = await writeOcmLabShim().catch(() => null);
  return {
    labName: config.name,
    kubeconfig: labKubeconfigFile(config.name),
    pathDirs: shimDir ? [shimDir] : [],
    env: { OCM_LAB_NAME: config.name, ...(config.source ? { OCM_LAB_CONFIG: config.source } : {}) },
    clusters: [],
    addons: [],
    capabilities: [],
    dispose: async () => {
      if (shimDir) rmSync(shimDir, { recursive: true, force: true });
    },
  };
}
