import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * This package's built CLI, dist/cli/main.js, whether the code asking runs from dist/ or (under tests) from src/:
 * what the lab starts as its own processes (nodelet, supervisor, containers of the ocm-lab image) and what scenario
 * documents call as `ocm-lab`.
 */
export const CLI_MAIN = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));

/** Where provisioned binaries and build scratch live: $OCM_LAB_CACHE_DIR, else $XDG_CACHE_HOME/ocm-lab. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.OCM_LAB_CACHE_DIR) return path.resolve(env.OCM_LAB_CACHE_DIR);
  const base = env.XDG_CACHE_HOME ? path.resolve(env.XDG_CACHE_HOME) : path.join(os.homedir(), '.cache');
  return path.join(base, 'ocm-lab');
}

/** Where labs keep their state (PKI, data dirs, pid and log files): $OCM_LAB_HOME, else $XDG_STATE_HOME/ocm-lab/labs. */
function labsRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.OCM_LAB_HOME) return path.resolve(env.OCM_LAB_HOME);
  const base = env.XDG_STATE_HOME ? path.resolve(env.XDG_STATE_HOME) : path.join(os.homedir(), '.local', 'state');
  return path.join(base, 'ocm-lab', 'labs');
}

export function labDir(labName: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(labsRoot(env), labName);
}

/** The lab's kubeconfig, one context per cluster named after it (every runtime writes it). */
export function labKubeconfigFile(labName: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(labDir(labName, env), 'kubeconfig');
}

/** One cluster's admin kubeconfig (a single context), where every runtime writes it. */
export function clusterKubeconfigFile(labName: string, cluster: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(labDir(labName, env), 'clusters', cluster, 'kubeconfigs', 'admin.kubeconfig');
}

/**
 * Where `ocm-lab tutorial` keeps a reader's place in a document (progress.json) and the document's
 * working directory (the variables its blocks export), so `--resume` continues in a new process.
 * Beside the labs' directories, not in one: a lab's directory is its runtime's (up and down own it);
 * lab names cannot start with a dot.
 */
export function tutorialDir(labName: string, document: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(labsRoot(env), '.tutorials', labName, document);
}
