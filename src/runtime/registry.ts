import type { CommandModule } from 'yargs';
import { recordedRuntime } from '../config/lab-state.js';
import { InvalidInputError } from '../errors.js';
import { EXISTING_UP_FLAGS } from './existing/flags.js';
import type { RuntimeUpFlag } from './flags.js';
import { KIND_UP_FLAGS } from './kind/flags.js';
import type { RuntimeDefinition, RuntimeName, RuntimeSelection, Runtime } from './types.js';

export type { RuntimeSelection } from './types.js';

/** An `ocm-lab internal <name>` command a runtime's nodes run, loaded only when that process starts. */
type InternalCommandLoader = () => Promise<CommandModule<any, any>>;

/**
 * Every runtime, one line each (kwokctl's Register): a runtime is its folder
 * under src/runtime/ and its line here, with the flags `up` takes for its
 * options (plain data: `up` declares them before any runtime loads) and the
 * internal commands its nodes run. Loaded only when a command needs it, so
 * `ocm-lab --version` loads none.
 */
const RUNTIMES: Record<
  string,
  {
    load: () => Promise<RuntimeDefinition>;
    upFlags?: readonly RuntimeUpFlag[];
    internalCommands?: Readonly<Record<string, InternalCommandLoader>>;
    hostReachesNodes: boolean;
  }
> = {
  kind: {
    load: () => import('./kind/index.js').then((m) => m.kindRuntime),
    upFlags: KIND_UP_FLAGS,
    internalCommands: { 'vpc-gateway': () => import('./kind/vpc-gateway-command.js').then((m) => m.vpcGatewayCommand) },
    // Docker Desktop, WSL2 with its engine, rootless Docker and a Podman machine give the host no route to a
    // container's address: the host reaches kind's nodes only at the ports published on 127.0.0.1.
    hostReachesNodes: false,
  },
  // Its nodes are network namespaces of this machine, routed from the host.
  local: { load: () => import('./local/index.js').then((m) => m.localRuntime), hostReachesNodes: true },
  // The user's clusters, wherever their nodes are.
  existing: { load: () => import('./existing/index.js').then((m) => m.existingRuntime), upFlags: EXISTING_UP_FLAGS, hostReachesNodes: false },
};

/** `up`'s flags for runtime options, by runtime (runtime/flags.ts turns the given ones into options). */
export const RUNTIME_UP_FLAGS: Readonly<Record<string, readonly RuntimeUpFlag[]>> = Object.fromEntries(
  Object.entries(RUNTIMES).flatMap(([name, r]) => (r.upFlags ? [[name, r.upFlags]] : [])),
);

/** `ocm-lab internal` commands that runtimes register (cli/commands/internal/ loads them beside its own). */
export const RUNTIME_INTERNAL_COMMANDS: Readonly<Record<string, InternalCommandLoader>> = Object.fromEntries(
  Object.values(RUNTIMES).flatMap((r) => Object.entries(r.internalCommands ?? {})),
);

export type RuntimeChoice = RuntimeName | 'auto';
export const RUNTIME_CHOICES: readonly RuntimeChoice[] = ['auto', ...Object.keys(RUNTIMES)];

function definitionLoader(name: string, said: string): () => Promise<RuntimeDefinition> {
  const load = RUNTIMES[name]?.load;
  if (!load) throw new InvalidInputError(`${said} is '${name}', which is not a runtime; choose one of: ${RUNTIME_CHOICES.join(', ')}`);
  return load;
}

/** The runtime a lab was brought up with (`runtime` of `<labDir>/state.json`), or null when there is no such lab (or it names no runtime we have). */
export async function labRuntimeName(labName: string): Promise<RuntimeName | null> {
  const name = await recordedRuntime(labName);
  return name !== null && name in RUNTIMES ? name : null;
}

/** Whether this machine dials the addresses of runtime `name`'s nodes (false for a name that is no runtime). */
export function runtimeHostReachesNodes(name: string): boolean {
  return RUNTIMES[name]?.hostReachesNodes ?? false;
}

/**
 * Whether this machine can dial the addresses of lab `labName`'s nodes (and so of its hostNetwork pods); when
 * not, or when the lab's runtime is unknown, the host reaches them through the API server (port-forward).
 * `up` records the answer in the lab's state (`hostReachesNodes`); this is for a lab brought up before that.
 */
export async function hostReachesNodeAddresses(labName: string): Promise<boolean> {
  const name = await labRuntimeName(labName);
  return name !== null && runtimeHostReachesNodes(name);
}

/** Whether `<labDir>/state.json` exists: every runtime records its lab there, so without it no runtime has the lab. */
export async function labStateExists(labName: string): Promise<boolean> {
  return (await recordedRuntime(labName)) !== null;
}

/** A runtime and why it was chosen (for `auto`: "runtime: kind (a Docker engine answers at …)"). */
export interface ResolvedRuntime {
  name: RuntimeName;
  reason: string;
}

/**
 * What `auto` means here: the runtime of the lab when it exists; else
 * $OCM_LAB_RUNTIME; else the first runtime with an `autoRank` that is
 * available (kind when a Docker engine answers and the kind CLI is there, else
 * local). `existing` has no rank: it needs the user's clusters.
 */
export async function resolveRuntime(choice: RuntimeChoice = 'auto', labName?: string): Promise<ResolvedRuntime> {
  if (choice !== 'auto') {
    definitionLoader(choice, '--runtime');
    return { name: choice, reason: 'chosen with --runtime' };
  }
  const recorded = labName ? await labRuntimeName(labName) : null;
  if (recorded) return { name: recorded, reason: `lab '${labName}' was brought up with it` };
  const fromEnv = process.env.OCM_LAB_RUNTIME;
  if (fromEnv && fromEnv !== 'auto') {
    definitionLoader(fromEnv, '$OCM_LAB_RUNTIME');
    return { name: fromEnv, reason: 'chosen with $OCM_LAB_RUNTIME' };
  }
  const ranked = (await runtimeDefinitions()).filter((d) => d.autoRank !== undefined).sort((a, b) => a.autoRank! - b.autoRank!);
  const passed: string[] = [];
  for (const definition of ranked) {
    const { available, reason } = definition.available ? await definition.available() : { available: true, reason: null };
    if (available) return { name: definition.name, reason: reason ?? (passed.length ? passed.join('; ') : `the ${definition.name} runtime is usable`) };
    passed.push(`the ${definition.name} runtime is not usable: ${reason ?? 'unknown'}`);
  }
  throw new InvalidInputError(`no runtime is usable on this machine: ${passed.join('; ')}`);
}

/** What runtime `name` registered (for `setup`, which prepares a runtime without making one). */
export async function runtimeDefinition(name: RuntimeName): Promise<RuntimeDefinition> {
  return definitionLoader(name, '--runtime')();
}

/** Every registered runtime's definition, in the registry's order (loads each runtime's small index module, not the runtime). */
export async function runtimeDefinitions(): Promise<RuntimeDefinition[]> {
  return Promise.all(Object.values(RUNTIMES).map(async (r) => r.load()));
}

/** The runtime `name`, made with its options (each runtime checks its own). */
export async function runtimeNamed(name: RuntimeName, selection: RuntimeSelection = {}): Promise<Runtime<any, any>> {
  const unknown = Object.keys(selection.fileOptions ?? {}).filter((n) => !(n in RUNTIMES));
  if (unknown.length)
    throw new InvalidInputError(`runtime.${unknown[0]} of the lab file names no runtime; runtime options go under one of: ${Object.keys(RUNTIMES).join(', ')}`);
  return (await definitionLoader(name, '--runtime')()).create({
    ...(selection.fileOptions?.[name] ?? {}),
    ...(selection.options ?? {}),
    ...(selection.flagOptions?.[name] ?? {}),
  });
}

export async function selectRuntime(choice: RuntimeChoice = 'auto', selection: RuntimeSelection = {}): Promise<Runtime<any, any>> {
  return runtimeNamed((await resolveRuntime(choice, selection.labName)).name, selection);
}
