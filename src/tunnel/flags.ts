import fs from 'node:fs';
import { InvalidInputError } from '../errors.js';

/** Go-style durations as upstream flags take them: 500ms, 10s, 1m30s. */
export function parseDuration(flag: string, text: string): number {
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let total = 0;
  let consumed = 0;
  for (const m of text.matchAll(re)) {
    if (m.index !== consumed) break;
    consumed += m[0].length;
    total += Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
  }
  if (consumed !== text.length || text.length === 0) {
    throw new InvalidInputError(`--${flag} ${JSON.stringify(text)} is not a duration`, { hint: 'use a number with a unit, e.g. 500ms, 10s, 1m' });
  }
  return total;
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
