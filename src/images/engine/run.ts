import { engineEndpointEnv, type EngineName } from '../../host/engine.js';
import { run, type RunResult } from '../../util/exec.js';

export interface EngineRunOptions {
  /** Bytes or text for the command's stdin (`docker load`, `docker import -`). */
  input?: string | Buffer;
  /** A file to feed to stdin. */
  inputFile?: string;
  /** Return a non-zero exit instead of throwing. */
  allowFailure?: boolean;
  signal?: AbortSignal;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * One command of the engine's CLI (`docker …`, `podman …`): the one place either is started for the lab's objects; with
 * the lab engine's endpoint (`DOCKER_HOST` … as at `up`) over the environment.
 */
export function engineRun(cli: EngineName, args: readonly string[], options: EngineRunOptions = {}): Promise<RunResult> {
  return run(cli, args, {
    allowFailure: options.allowFailure,
    input: options.input,
    inputFile: options.inputFile,
    cancelSignal: options.signal,
    cwd: options.cwd,
    env: { ...engineEndpointEnv(), ...options.env },
    maxBuffer: 256 * 1024 * 1024,
  });
}

/** Parsed `<cli> … inspect` output (always an array); empty when the object does not exist. */
export async function engineInspect<T>(cli: EngineName, kind: 'container' | 'network' | 'image' | 'volume', names: readonly string[]): Promise<T[]> {
  if (!names.length) return [];
  const r = await engineRun(cli, [kind, 'inspect', ...names], { allowFailure: true });
  if (!r.stdout.trim()) return [];
  try {
    return JSON.parse(r.stdout) as T[];
  } catch {
    return [];
  }
}
