import fs from 'node:fs/promises';
import path from 'node:path';
import { InvalidInputError } from '../errors.js';
import { loadAddonVocabulary } from './addon-vocabulary.js';
import { defaultLabConfig } from './defaults.js';
import { readLabState } from './lab-state.js';
import type { LabConfig } from './types.js';

/**
 * The lab described by `file`. Without a file: the default lab as it was last
 * brought up (so `cluster add` sticks across `up`), or the built-in default
 * lab when there is none. Throws InvalidInputError.
 */
export async function loadLabConfig(file?: string): Promise<LabConfig> {
  if (file !== undefined) return validateLabFile(file);
  const builtIn = defaultLabConfig();
  return (await recordedLabConfig(builtIn.name)) ?? builtIn;
}

/** The config a lab was last brought up with (every runtime records it in `<labDir>/state.json`), or null. */
export async function recordedLabConfig(labName: string): Promise<LabConfig | null> {
  return (await readLabState(labName).catch(() => null))?.config ?? null;
}

/** Reads and validates a lab file; the file must exist. Throws InvalidInputError naming the path and every problem. */
export async function validateLabFile(file: string): Promise<LabConfig> {
  const absolute = path.resolve(file);
  let text: string;
  try {
    text = await fs.readFile(absolute, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    throw new InvalidInputError(`cannot read lab file ${absolute}: ${why}`, {
      hint: 'pass --config with the path of a readable lab file (see examples/), or leave it out for the default lab',
      cause: err,
    });
  }
  // The parser (zod, yaml) and the addon registry are loaded only for a lab file: the commands that read the
  // recorded lab start faster without them.
  const [{ parseLabConfig }, addons] = await Promise.all([import('./parse.js'), loadAddonVocabulary()]);
  return parseLabConfig(text, absolute, addons);
}
