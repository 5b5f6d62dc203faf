import { MissingPrerequisiteError } from '../errors.js';
import { engineChoice, type EngineName, type RecordedEngine } from './engine.js';

/**
 * What a lab records of its container engine at `up`, and what later commands make of the record: the engine a lab's
 * containers, networks and kind clusters are in is the one it was brought up with, not the one found now.
 */

/** The variables that tell each engine's CLI where the engine is (and kind's, which runs that CLI). */
const ENDPOINT_VARIABLES: Record<EngineName, readonly string[]> = {
  docker: ['DOCKER_HOST', 'DOCKER_CONTEXT', 'DOCKER_TLS_VERIFY', 'DOCKER_CERT_PATH'],
  podman: ['CONTAINER_HOST', 'CONTAINER_CONNECTION', 'CONTAINER_SSHKEY'],
};

const ENGINE_LABEL: Record<EngineName, string> = { docker: 'Docker', podman: 'Podman' };

/** A URL with a password in it (`ssh://user:secret@host`): never written to a state file. */
function carriesPassword(value: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\/[^/@]*:[^/@]*@/i.test(value);
}

/** What `up` records of engine `name`: its name and the endpoint variables set in `env` (paths and addresses, no secrets). */
export function engineRecord(name: EngineName, env: NodeJS.ProcessEnv = process.env): RecordedEngine {
  const endpoint: Record<string, string> = {};
  for (const key of ENDPOINT_VARIABLES[name]) {
    const value = env[key];
    if (value && !carriesPassword(value)) endpoint[key] = value;
  }
  return { name, endpoint };
}

/**
 * `engine` of a kind lab's state: null when absent (a lab brought up before it was recorded: the engine found now is
 * taken, as before). Anything else than a record of docker or podman is refused rather than guessed: a wrong guess
 * would look for the lab in another engine and report it gone.
 */
export function parseRecordedEngine(value: unknown, file: string): RecordedEngine | null {
  if (value === undefined || value === null) return null;
  const record = typeof value === 'object' ? (value as { name?: unknown; endpoint?: unknown }) : {};
  const endpoint = record.endpoint ?? {};
  const stringsOnly = typeof endpoint === 'object' && endpoint !== null && Object.values(endpoint).every((v) => typeof v === 'string');
  if ((record.name !== 'docker' && record.name !== 'podman') || !stringsOnly) {
    throw new Error(
      `${file}: runtimeState.engine is ${JSON.stringify(value)}, not a record of the engine the lab was brought up with ` +
        `({"name": "docker" or "podman", "endpoint": {…}}); set its name to the engine the lab runs on, or remove the field to take the engine found now`,
    );
  }
  return { name: record.name, endpoint: { ...(endpoint as Record<string, string>) } };
}

/**
 * The one line a command says when it uses lab `lab`'s recorded engine over what the environment asks now: another
 * `$OCM_LAB_ENGINE`, or another endpoint than the one recorded. Null when they agree (or nothing is recorded). Pure.
 */
export function labEngineNote(lab: string, recorded: RecordedEngine | null, env: NodeJS.ProcessEnv): string | null {
  if (!recorded) return null;
  const differences: string[] = [];
  const chosen = engineChoice(env);
  if (chosen !== 'auto' && chosen !== recorded.name) differences.push(`not OCM_LAB_ENGINE=${chosen}`);
  for (const [key, value] of Object.entries(recorded.endpoint)) {
    if (env[key] !== value) differences.push(`${key}=${value} as at up, not ${env[key] ? `${key}=${env[key]}` : `${key} unset`}`);
  }
  if (!differences.length) return null;
  return `engine: ${recorded.name}, the one lab '${lab}' was brought up with (${differences.join('; ')})`;
}

/** Exit 3 for a command on lab `lab` whose recorded engine does not answer: which engine, where, why, and what to do. */
export function labEngineMissing(lab: string, recorded: RecordedEngine, reason: string | null, command: string): MissingPrerequisiteError {
  const label = ENGINE_LABEL[recorded.name];
  const where = Object.entries(recorded.endpoint).map(([k, v]) => `${k}=${v}`);
  const start =
    recorded.name === 'docker'
      ? 'start Docker (Docker Desktop, `systemctl start docker`)'
      : 'start Podman (`podman machine start` where it runs in a VM, `systemctl start podman.socket` for its service)';
  return new MissingPrerequisiteError(
    `lab '${lab}' was brought up on ${label}${where.length ? ` (${where.join(', ')})` : ''}, and ${label} does not answer: ${reason ?? 'unknown'}; ` +
      `nothing was changed`,
    {
      hint:
        `${start}, check \`${recorded.name} version\` answers${where.length ? ` with ${where.join(' ')}` : ''}, then run 'ocm-lab ${command}' again ` +
        `(the lab's containers, networks and kind clusters are in ${label}, whatever OCM_LAB_ENGINE says)`,
    },
  );
}
