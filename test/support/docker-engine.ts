import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../../src/util/exec.js';

/**
 * A Docker engine of the tests' own (Debian's dockerd), started and stopped by
 * scripts/docker-engine.sh, which holds the logic (socket, data and exec roots,
 * the runc-bounded default runtime, Docker's iptables on and put back at stop).
 * The data root is a throw-away directory: `stop` deletes it.
 */
export interface DockerEngine {
  /** DOCKER_HOST of the engine, e.g. unix:///run/ocm-lab-test-docker/docker.sock. */
  host: string;
  /** Environment for child processes (docker, kind, ocm-lab) that should use it. */
  env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

const SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../scripts/docker-engine.sh');

/**
 * Where the engine's socket, pidfile, exec root and "before" state live. $OCM_LAB_DOCKER_RUN_DIR (with
 * $OCM_LAB_DOCKER_BRIDGE, _BIP and _POOL, which the script reads) gives a run of its own an engine of its own.
 */
const TEST_DOCKER_RUN_DIR = process.env.OCM_LAB_DOCKER_RUN_DIR || '/run/ocm-lab-test-docker';

export async function startDockerEngine(): Promise<DockerEngine> {
  const dataRoot = await fs.mkdtemp('/var/tmp/ocm-lab-test-docker-');
  const env = { ...process.env, OCM_LAB_DOCKER_RUN_DIR: TEST_DOCKER_RUN_DIR, OCM_LAB_DOCKER_DATA_ROOT: dataRoot };
  const stop = async () => {
    await run('bash', [SCRIPT, 'stop', '--purge'], { env, timeout: 120_000 });
  };
  let started: string;
  try {
    started = (await run('bash', [SCRIPT, 'start'], { env, timeout: 120_000 })).stdout.trim();
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
  const host = started.split('\n').pop() as string;
  return { host, env: { ...process.env, DOCKER_HOST: host }, stop };
}
