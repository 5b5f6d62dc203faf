import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { LabConfig } from '../config/index.js';
import { MissingPrerequisiteError, NotFoundError, NotReadyError } from '../errors.js';
import { labPodImage, labStatus } from '../lab/lifecycle.js';
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
  /** Removes what resolving created (the shim directory). */
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
    dispose: () => fs.rm(shimDir, { recursive: true, force: true }),
  };
}
