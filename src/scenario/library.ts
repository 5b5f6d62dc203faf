import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { InvalidInputError, NotFoundError } from '../errors.js';
import { parseScenario } from './parse.js';
import type { Scenario } from './types.js';

/** The repository's scenarios/ folder (next to dist/ and src/). */
export const DEFAULT_SCENARIO_DIR = fileURLToPath(new URL('../../scenarios/', import.meta.url));

/** Every document in a folder (README.md aside), parsed; one malformed document fails the call with its file and line. */
export async function listScenarios(dir = DEFAULT_SCENARIO_DIR): Promise<Scenario[]> {
  let entries: string[];
  try {
    entries = await fs.readdir(dir);
  } catch (err) {
    throw new NotFoundError(`cannot read the scenario directory ${dir}: ${(err as Error).message}`);
  }
  const files = entries.filter((f) => f.endsWith('.md') && f.toLowerCase() !== 'readme.md').sort();
  return Promise.all(files.map(async (f) => parseScenario(await fs.readFile(path.join(dir, f), 'utf8'), path.join(dir, f))));
}

/** The named documents, in the order given; an unknown name is an error that lists the known ones. */
export function pickScenarios(all: readonly Scenario[], names: readonly string[]): Scenario[] {
  return names.map((n) => {
    const found = all.find((s) => s.name === n || `${s.name}.md` === n);
    if (!found) throw new NotFoundError(`no scenario '${n}'`, { hint: `known scenarios: ${all.map((s) => s.name).join(', ') || '(none)'}` });
    return found;
  });
}

/** Documents whose name matches a regular expression; none matching is an error. */
export function filterScenarios(all: readonly Scenario[], pattern: string): Scenario[] {
  let re: RegExp;
  try {
    re = new RegExp(pattern);
  } catch (err) {
    throw new InvalidInputError(`--only '${pattern}' is not a regular expression: ${(err as Error).message}`);
  }
  const chosen = all.filter((s) => re.test(s.name));
  if (!chosen.length)
    throw new NotFoundError(`no scenario matches '${pattern}'`, { hint: `known scenarios: ${all.map((s) => s.name).join(', ') || '(none)'}` });
  return chosen;
}
