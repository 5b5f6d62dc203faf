import fs from 'node:fs/promises';
import path from 'node:path';
import { labDir } from '../paths.js';
import { writeFileAtomic } from '../util/atomic-file.js';
import type { LabConfig } from './types.js';

/**
 * What every lab records about itself in `<labDir>/state.json`, whatever runs
 * it: the envelope is the same for every runtime, and the runtime keeps its
 * own part (network resources, node image, contexts …) in `runtimeState`.
 */
export interface LabState<R = unknown> {
  version: 1;
  lab: string;
  /** The runtime that brought the lab up: every later command uses it. */
  runtime: string;
  /**
   * Whether this machine dials the addresses of the lab's nodes (the runtime's registry line, recorded at `up` so that
   * `proxy kubectl` reads it here instead of loading the registry). Absent in a lab brought up before it was recorded.
   */
  hostReachesNodes?: boolean;
  createdAt: string;
  /** The config the lab was last brought up with. */
  config: LabConfig;
  runtimeState: R;
}

const ENVELOPE_KEYS = ['version', 'lab', 'runtime', 'hostReachesNodes', 'createdAt', 'config', 'runtimeState'] as const;

function labStateFile(lab: string): string {
  return path.join(labDir(lab), 'state.json');
}

/**
 * The state of lab `lab`, or null when it has none. A state written before the
 * envelope existed (the runtime's fields beside the common ones) is read as
 * the same envelope, so a lab brought up by an older ocm-lab keeps working.
 */
export async function readLabState<R = unknown>(lab: string): Promise<LabState<R> | null> {
  const file = labStateFile(lab);
  const text = await fs.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (text === null) return null;
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(text) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`${file} is not JSON (${(err as Error).message}); remove the lab with 'ocm-lab down', or the file by hand`);
  }
  if (raw.version !== 1) throw new Error(`${file}: unknown state version ${String(raw.version)} (this ocm-lab reads version 1)`);
  if (typeof raw.runtime !== 'string' || typeof raw.config !== 'object' || raw.config === null)
    throw new Error(`${file} has no runtime or config; remove the lab with 'ocm-lab down', or the file by hand`);
  const runtimeState =
    'runtimeState' in raw ? raw.runtimeState : Object.fromEntries(Object.entries(raw).filter(([k]) => !(ENVELOPE_KEYS as readonly string[]).includes(k)));
  return {
    version: 1,
    lab: typeof raw.lab === 'string' ? raw.lab : lab,
    runtime: raw.runtime,
    ...(typeof raw.hostReachesNodes === 'boolean' ? { hostReachesNodes: raw.hostReachesNodes } : {}),
    createdAt: typeof raw.createdAt === 'string' ? raw.createdAt : '',
    config: raw.config as LabConfig,
    runtimeState: runtimeState as R,
  };
}

/** Writes the state whole or not at all (0600: it names the user's kubeconfig files). */
export async function writeLabState(state: LabState): Promise<void> {
  await writeFileAtomic(labStateFile(state.lab), `${JSON.stringify(state, null, 2)}\n`, 0o600);
}

/** What the envelope of lab `lab`'s state says of its runtime, or null when there is no readable state (nothing else is checked: a fast read). */
export async function recordedRuntimeFacts(lab: string): Promise<Pick<LabState, 'runtime' | 'hostReachesNodes'> | null> {
  const text = await fs.readFile(labStateFile(lab), 'utf8').catch(() => null);
  if (text === null) return null;
  let raw: { runtime?: unknown; hostReachesNodes?: unknown } | null;
  try {
    raw = JSON.parse(text) as typeof raw;
  } catch {
    return null;
  }
  if (typeof raw?.runtime !== 'string') return null;
  return { runtime: raw.runtime, ...(typeof raw.hostReachesNodes === 'boolean' ? { hostReachesNodes: raw.hostReachesNodes } : {}) };
}

/** The runtime lab `lab` was brought up with, or null when there is no readable state. */
export async function recordedRuntime(lab: string): Promise<string | null> {
  return (await recordedRuntimeFacts(lab))?.runtime ?? null;
}
