import fs from 'node:fs/promises';
import path from 'node:path';
import { InvalidInputError } from '../errors.js';
import { defaultLabConfig } from './defaults.js';
import { parseLabConfig } from './parse.js';
import type { LabConfig } from './types.js';

/** The lab described by `file`, or the built-in default lab when no file is given. Throws InvalidInputError. */
export async function loadLabConfig(file?: string): Promise<LabConfig> {
  if (file === undefined) return defaultLabConfig();
  return validateLabFile(file);
}

/** Reads and validates a lab file; the file must exist. Throws InvalidInputError naming the path and every problem. */
export async function validateLabFile(file: string): Promise<LabConfig> {
  const absolute = path.resolve(file);
  let text: string;
  try {
    text = await fs.readFile(absolute, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    throw new InvalidInputError(`cannot read lab file ${absolute}: ${why}`, {
      hint: 'pass --config with the path of a readable lab file (see examples/), or leave it out for the default lab',
      cause: err,
    });
  }
  return parseLabConfig(text, absolute);
}
