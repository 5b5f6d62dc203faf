import type { Options } from 'execa';
import { LabError } from '../errors.js';

export interface RunResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** Keeps the end of a long output: the last lines are where tools say why they failed. */
export function tail(text: string, lines = 20): string {
  const all = text.trimEnd().split('\n');
  return all.slice(-lines).join('\n');
}

/**
 * Runs a command to completion. On failure the error says what ran, its exit
 * status and the tail of what it printed, so callers never have to.
 */
export async function run(file: string, args: readonly string[], options: Options & { allowFailure?: boolean } = {}): Promise<RunResult> {
  const { allowFailure, ...execaOptions } = options;
  const { execa } = await import('execa');
  const result = await execa(file, args, { reject: false, all: true, ...execaOptions, encoding: 'utf8' } as Options);
  const stdout = String(result.stdout ?? '');
  const stderr = String(result.stderr ?? '');
  const exitCode = result.exitCode ?? -1;
  if (exitCode !== 0 && !allowFailure) {
    const printed = tail(String(result.all ?? `${stdout}\n${stderr}`));
    const why = result.failed && result.exitCode === undefined ? String(result.shortMessage ?? 'could not start') : `exit status ${exitCode}`;
    throw new LabError('failure', `command failed (${why}): ${[file, ...args].join(' ')}${printed ? `\n--- output (last lines) ---\n${printed}` : ''}`);
  }
  return { stdout, stderr, exitCode };
}
