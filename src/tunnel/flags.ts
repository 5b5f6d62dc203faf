import fs from 'node:fs';
import { InvalidInputError } from '../errors.js';
import { parseGoDuration } from '../util/duration.js';

/** A flag's Go duration (500ms, 10s, 1m30s) in milliseconds; anything else is bad input naming the flag. */
export function parseDuration(flag: string, text: string): number {
  const ms = parseGoDuration(text);
  if (ms === null) {
    throw new InvalidInputError(`--${flag} ${JSON.stringify(text)} is not a duration`, { hint: 'use a number with a unit, e.g. 500ms, 10s, 1m' });
  }
  return ms;
}

/**
 * Reads a PEM file a flag names; a missing flag or file is bad input naming that flag.
 */
export function readPemFlag(flag: string, file: string | undefined, why: string): Buffer {
  if (!file) throw new InvalidInputError(`--${flag} is required: ${why}`);
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new InvalidInputError(`--${flag} ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, {
      hint: 'pass the path of a PEM file this process can read',
    });
  }
}

export function parsePort(flag: string, value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    throw new InvalidInputError(`--${flag} ${value} is not a port number (0-65535; 0 picks a free port)`);
  }
  return value;
}

/** `cluster1:443=10.0.0.2:6443` → ['cluster1:443', '10.0.0.2:6443']. */
export function parseHostMapping(text: string): [string, string] {
  const m = /^([^=\s]+:\d+)=([^=\s]+:\d+)$/.exec(text);
  if (!m) {
    throw new InvalidInputError(`--host-mapping ${JSON.stringify(text)} is not <host>:<port>=<host>:<port>`, {
      hint: 'e.g. --host-mapping cluster1:443=10.0.0.2:6443',
    });
  }
  return [m[1]!, m[2]!];
}
