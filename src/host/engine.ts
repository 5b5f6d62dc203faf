import { InvalidInputError } from '../errors.js';
import { run } from '../util/exec.js';

/**
 * Which container engine this machine runs the lab's containers on: Docker or Podman, found by which CLI answers
 * `version --format json`. It lives beside the host's facts (its `info` is read there) and below `src/images/`, whose
 * engine seam (`src/images/engine/`) gives each engine's forms of the calls.
 */

export type EngineName = 'docker' | 'podman';
export type EngineChoice = EngineName | 'auto';

/** The engine found: its name, the CLI that drives it, and the version its server (or Podman's own CLI) says. */
export interface EngineIdentity {
  name: EngineName;
  cli: EngineName;
  version: string;
  /** How it was chosen, for `up`'s first lines: `$OCM_LAB_ENGINE`, or what auto saw. */
  why: string;
}

export type EngineDetection = { found: EngineIdentity; reason: null } | { found: null; reason: string };

/** What one `<cli> version --format json` printed and how it ended; `started: false` when the CLI is not there. */
export interface VersionProbe {
  started: boolean;
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** `$OCM_LAB_ENGINE`: docker, podman or auto (unset or empty is auto); anything else is bad input (exit 2). */
export function engineChoice(env: NodeJS.ProcessEnv = process.env): EngineChoice {
  const value = (env.OCM_LAB_ENGINE ?? '').trim();
  if (value === '' || value === 'auto') return 'auto';
  if (value === 'docker' || value === 'podman') return value;
  throw new InvalidInputError(`OCM_LAB_ENGINE=${value} is not a container engine ocm-lab drives`, {
    hint: 'set OCM_LAB_ENGINE to docker, podman or auto (auto: Docker when it answers, else Podman), or unset it',
  });
}

/** What a `version --format json` says: whose CLI printed it, and the engine's version (null when no engine answered). */
export interface VersionReading {
  /** Podman's JSON (`Client.OsArch`, `Client.APIVersion`), whether `podman` or Podman's `docker` shim printed it. */
  printedBy: EngineName;
  version: string | null;
}

/**
 * Reads one `version --format json`. Docker's client says `ApiVersion` and `Arch` and has a `Server` (null when no daemon
 * answers); Podman's says `APIVersion` and `OsArch`, and has a `Server` only as a remote client (a Podman machine). A
 * local Podman has no server: its CLI is the engine, so a zero exit with its client's version is an answer.
 */
export function readVersionJson(probe: VersionProbe): VersionReading | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(probe.stdout.trim());
  } catch {
    return null;
  }
  if (!parsed || typeof parsed !== 'object') return null;
  const { Client: client, Server: server } = parsed as { Client?: Record<string, unknown> | null; Server?: Record<string, unknown> | null };
  if (!client || typeof client !== 'object') return null;
  const text = (o: Record<string, unknown> | null | undefined, key: string) => (o && typeof o[key] === 'string' && o[key] !== '' ? (o[key] as string) : null);
  const podman = 'OsArch' in client || 'APIVersion' in client;
  const answered = probe.exitCode === 0;
  if (podman) return { printedBy: 'podman', version: answered ? (text(server, 'Version') ?? text(client, 'Version')) : null };
  return { printedBy: 'docker', version: answered ? text(server, 'Version') : null };
}

function whyNot(cli: EngineName, probe: VersionProbe): string {
  if (!probe.started) return `the ${cli} CLI could not be started`;
  const printed = (probe.stderr || probe.stdout).trim().split('\n').slice(-3).join(' ');
  return `no ${cli === 'docker' ? 'Docker engine' : 'Podman'} answers '${cli} version'${printed ? `: ${printed}` : ''}`;
}

/**
 * The engine for `choice`, from the CLIs' answers (`probe` runs `<cli> version --format json`; asked lazily, Docker
 * first). auto: Docker when it answers, else Podman; Podman's `docker` shim counts as Podman (kind would take its
 * podman provider through it), driven through `podman`. Pure but for `probe`.
 */
export async function decideEngine(choice: EngineChoice, probe: (cli: EngineName) => Promise<VersionProbe>): Promise<EngineDetection> {
  const reasons: string[] = [];
  if (choice !== 'podman') {
    const printed = await probe('docker');
    const reading = readVersionJson(printed);
    if (reading?.printedBy === 'docker' && reading.version) {
      return {
        found: { name: 'docker', cli: 'docker', version: reading.version, why: choice === 'docker' ? 'chosen with $OCM_LAB_ENGINE' : 'Docker answers' },
        reason: null,
      };
    }
    if (reading?.printedBy === 'podman') {
      if (choice === 'docker') {
        return {
          found: null,
          reason:
            "OCM_LAB_ENGINE=docker, but the docker command is Podman's docker shim (its 'docker version' prints Podman's fields); " +
            'set OCM_LAB_ENGINE=podman or auto',
        };
      }
      reasons.push("the docker command is Podman's docker shim");
    } else {
      reasons.push(
        printed.started && !reading && printed.exitCode === 0 ? "'docker version --format json' printed no version JSON" : whyNot('docker', printed),
      );
    }
    if (choice === 'docker') return { found: null, reason: reasons.join('; ') };
  }
  const printed = await probe('podman');
  const reading = readVersionJson(printed);
  if (reading?.printedBy === 'podman' && reading.version) {
    const why = choice === 'podman' ? 'chosen with $OCM_LAB_ENGINE' : `Podman answers; ${reasons.join('; ')}`;
    return { found: { name: 'podman', cli: 'podman', version: reading.version, why }, reason: null };
  }
  reasons.push(printed.started && !reading && printed.exitCode === 0 ? "'podman version --format json' printed no version JSON" : whyNot('podman', printed));
  return { found: null, reason: reasons.join('; ') };
}

/**
 * The engine a lab was brought up with, as `up` recorded it in the lab's state: its name, and the variables that told
 * its CLI where the engine is (`DOCKER_HOST`, `CONTAINER_HOST` …) when they were set.
 */
export interface RecordedEngine {
  name: EngineName;
  endpoint: Record<string, string>;
}

/** The lab engine every later engine call of this process uses, once a command has read a lab that records one. */
let labEngine: RecordedEngine | null = null;

/**
 * Makes `engine` (a lab's, from its state) the engine of this process's engine calls, whatever `$OCM_LAB_ENGINE` says;
 * null goes back to `$OCM_LAB_ENGINE`'s choice (a lab that records none). One lab's command per process: the last one set wins.
 */
export function useLabEngine(engine: RecordedEngine | null): void {
  labEngine = engine;
}

/** The variables every engine CLI (and kind) runs with, over the environment: the lab engine's endpoint, else none. */
export function engineEndpointEnv(): Record<string, string> {
  return labEngine?.endpoint ?? {};
}

/**
 * The engine to ask for: the one lab `recorded` was brought up with, whatever `$OCM_LAB_ENGINE` (still checked: a bad
 * value is bad input) or auto would take now; `$OCM_LAB_ENGINE`'s choice for a lab that records none. Pure.
 */
export function engineAsked(recorded: RecordedEngine | null, env: NodeJS.ProcessEnv): EngineChoice {
  const chosen = engineChoice(env);
  return recorded?.name ?? chosen;
}

/** The engine asked for now: the lab engine's when one is in use, else `$OCM_LAB_ENGINE`'s (auto when unset). */
export function askedEngine(env: NodeJS.ProcessEnv = process.env): EngineChoice {
  return engineAsked(labEngine, env);
}

async function probeVersion(cli: EngineName, endpoint: Record<string, string>): Promise<VersionProbe> {
  try {
    const r = await run(cli, ['version', '--format', 'json'], { allowFailure: true, timeout: 15_000, env: endpoint });
    return { started: r.exitCode !== -1, ...r };
  } catch (err) {
    return { started: false, exitCode: -1, stdout: '', stderr: (err as Error).message };
  }
}

const detections = new Map<string, Promise<EngineDetection>>();

/**
 * The engine asked for (`askedEngine`: a lab's recorded engine, else `$OCM_LAB_ENGINE`'s choice): found once per process
 * (a `version` call per CLI asked); when none answers it is asked again next time (an engine being started meanwhile).
 */
export function detectEngine(env: NodeJS.ProcessEnv = process.env): Promise<EngineDetection> {
  const choice = askedEngine(env);
  const endpoint = engineEndpointEnv();
  const key = `${choice} ${JSON.stringify(endpoint)}`;
  let found = detections.get(key);
  if (!found) {
    found = decideEngine(choice, (cli) => probeVersion(cli, endpoint)).then((d) => {
      if (!d.found) detections.delete(key);
      return d;
    });
    detections.set(key, found);
  }
  return found;
}

/** The engine's name and version as `up` prints them first: `podman 4.3.1`. */
export function engineLine(identity: Pick<EngineIdentity, 'name' | 'version'>): string {
  return `${identity.name} ${identity.version}`;
}
