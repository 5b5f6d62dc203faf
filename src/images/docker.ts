import { MissingPrerequisiteError } from '../errors.js';
import { detectEngine, type EngineName } from '../host/engine.js';
import type { RunResult } from '../util/exec.js';
import { currentEngine } from './engine/index.js';
import { engineInspect, engineRun, type EngineRunOptions } from './engine/run.js';

/**
 * The container engine, through its CLI: `docker` (it honours DOCKER_HOST and contexts the way the user's own commands
 * do, on Linux and Docker Desktop) or `podman` (src/host/engine.ts says which; $OCM_LAB_ENGINE chooses). Every engine
 * call of the kind runtime goes here; what the two spell differently is in the seam, src/images/engine/.
 */
export type DockerOptions = EngineRunOptions;

/** One command of the engine's CLI: `docker <args>`, or `podman <args>` where the engine is Podman. */
export async function docker(args: readonly string[], options: DockerOptions = {}): Promise<RunResult> {
  return engineRun((await currentEngine()).cli, args, options);
}

/** The engine CLI `docker()` runs (`docker` or `podman`), for messages that say what ran. */
export async function engineCli(): Promise<EngineName> {
  return (await currentEngine()).cli;
}

/** Parsed `docker … inspect` output (always an array); empty when the object does not exist. */
export async function dockerInspect<T = Record<string, unknown>>(kind: 'container' | 'network' | 'image' | 'volume', names: readonly string[]): Promise<T[]> {
  return engineInspect<T>((await currentEngine()).cli, kind, names);
}

/** Does an engine answer? `reason` says what its `version` printed when it does not; `name` is which answered. */
export async function dockerEngine(): Promise<{
  available: boolean;
  serverVersion: string | null;
  reason: string | null;
  name: EngineName | null;
  why: string | null;
}> {
  const detection = await detectEngine();
  if (!detection.found) return { available: false, serverVersion: null, reason: detection.reason, name: null, why: null };
  return { available: true, serverVersion: detection.found.version, reason: null, name: detection.found.name, why: detection.found.why };
}

/** Throws exit 3 with what to do when no engine answers; else the engine's `<name> <version> (<why>)` (`podman 4.3.1 (Podman answers; …)`). */
export async function requireDockerEngine(): Promise<string> {
  const engine = await dockerEngine();
  if (!engine.available) {
    throw new MissingPrerequisiteError(`the kind runtime needs a Docker engine or Podman: ${engine.reason}`, {
      hint:
        'start Docker (Docker Desktop, `systemctl start docker`) or install Podman, check `docker version` or `podman version` answers ' +
        '(OCM_LAB_ENGINE=docker|podman picks one), or use --runtime local',
    });
  }
  return `${engine.name} ${engine.serverVersion} (${engine.why})`;
}

/** Labels every Docker object of ours carries, so `down` and leftover checks find exactly a lab's objects. */
export const LABEL_LAB = 'dev.ocm-lab.lab';
export const LABEL_ROLE = 'dev.ocm-lab.role';
