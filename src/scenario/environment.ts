import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LabConfig } from '../config/index.js';
import { NotFoundError } from '../errors.js';
import { labStatus } from '../lab/lifecycle.js';
import { ensureBinaries } from '../provision/index.js';

/** Everything a document's blocks run with: the lab's kubeconfig, kubectl and ocm-lab on PATH. */
export interface ScenarioEnvironment {
  labName: string;
  kubeconfig: string;
  clusters: string[];
  addons: string[];
  capabilities: string[];
  env: NodeJS.ProcessEnv;
  /** Removes the temporary ocm-lab shim. */
  dispose(): Promise<void>;
}

// The compiled CLI, whether this module runs from dist/ or (under tests) from src/.
const CLI_MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** Resolves a running lab into the environment scenarios run in. */
export async function resolveScenarioEnvironment(config: LabConfig): Promise<ScenarioEnvironment> {
  const status = await labStatus(config);
  if (!status.exists || !status.kubeconfig) throw new NotFoundError(`lab '${config.name}' is not up`, { hint: "run 'ocm-lab up' first" });
  const { kubectl } = await ensureBinaries(['kubectl'], { kubernetesVersion: config.kubernetesVersion });
  const shimDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-shim-'));
  await fs.writeFile(path.join(shimDir, 'ocm-lab'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_MAIN)} "$@"\n`, { mode: 0o755 });
  const pathDirs = [shimDir, path.dirname(kubectl as string)];
  return {
    labName: config.name,
    kubeconfig: status.kubeconfig,
    clusters: status.clusters.map((c) => c.name),
    addons: config.addons,
    capabilities: status.capabilities,
    env: {
      ...process.env,
      PATH: [...pathDirs, process.env.PATH ?? ''].join(path.delimiter),
      KUBECONFIG: status.kubeconfig,
      OCM_LAB_NAME: config.name,
      ...(config.source ? { OCM_LAB_CONFIG: config.source } : {}),
    },
    dispose: () => fs.rm(shimDir, { recursive: true, force: true }),
  };
}
