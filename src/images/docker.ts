import { execa } from 'execa';
import { MissingPrerequisiteError } from '../errors.js';
import { run, type RunResult } from '../util/exec.js';

/**
 * The Docker engine, through the `docker` CLI (it honours DOCKER_HOST and
 * contexts the way the user's own commands do, on Linux, Docker Desktop and
 * Podman's docker shim alike). Every Docker call of the kind runtime goes here.
 */
export interface DockerOptions {
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

export async function docker(args: readonly string[], options: DockerOptions = {}): Promise<RunResult> {
  return run('docker', args, {
    allowFailure: options.allowFailure,
    input: options.input,
    inputFile: options.inputFile,
    cancelSignal: options.signal,
    cwd: options.cwd,
    env: options.env,
    maxBuffer: 256 * 1024 * 1024,
  });
}

/** Parsed `docker … inspect` output (always an array); empty when the object does not exist. */
export async function dockerInspect<T = Record<string, unknown>>(kind: 'container' | 'network' | 'image' | 'volume', names: readonly string[]): Promise<T[]> {
  if (!names.length) return [];
  const r = await docker([kind, 'inspect', ...names], { allowFailure: true });
  if (!r.stdout.trim()) return [];
  try {
    return JSON.parse(r.stdout) as T[];
  } catch {
    return [];
  }
}

/** Does a Docker engine answer? `reason` says what `docker version` printed when it does not. */
export async function dockerEngine(): Promise<{ available: boolean; serverVersion: string | null; reason: string | null }> {
  const r = await execa('docker', ['version', '--format', '{{.Server.Version}}'], { reject: false, timeout: 15_000 });
  if (r.failed && r.exitCode === undefined) {
    return { available: false, serverVersion: null, reason: `the docker CLI could not be started (${r.shortMessage})` };
  }
  const version = String(r.stdout ?? '').trim();
  if (r.exitCode !== 0 || !version) {
    const printed = String(r.stderr || r.stdout || '')
      .trim()
      .split('\n')
      .slice(-3)
      .join(' ');
    return { available: false, serverVersion: null, reason: `no Docker engine answers 'docker version'${printed ? `: ${printed}` : ''}` };
  }
  return { available: true, serverVersion: version, reason: null };
}

/** Throws exit 3 with what to do when no engine answers. */
export async function requireDockerEngine(): Promise<string> {
  const engine = await dockerEngine();
  if (!engine.available) {
    throw new MissingPrerequisiteError(`the kind runtime needs a Docker engine: ${engine.reason}`, {
      hint: 'start Docker (Docker Desktop, `systemctl start docker`, or Podman with its docker socket), check `docker version` answers, or use --runtime local',
    });
  }
  return engine.serverVersion as string;
}

/** Labels every Docker object of ours carries, so `down` and leftover checks find exactly a lab's objects. */
export const LABEL_LAB = 'dev.ocm-lab.lab';
export const LABEL_ROLE = 'dev.ocm-lab.role';
