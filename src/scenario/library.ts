import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NotFoundError } from '../errors.js';
import { parseScenario } from './parse.js';
import type { Scenario } from './types.js';

/** The repository's scenarios/ folder (next to dist/ and src/). */
export const DEFAULT_SCENARIO_DIR = fileURLToPath(new URL('../../scenarios/', import.meta.url));

/** Every document in a folder, parsed (a malformed one fails the whole call, with file and line). */
export async function listScenarios(dir = DEFAULT_SCENARIO_DIR): Promise<Scenario[]> {
  const files = (await fs.readdir(dir)).filter((f) => f.endsWith('.md') && f.toLowerCase() !== 'readme.md').sort();
  return Promise.all(files.map(async (f) => parseScenario(await fs.readFile(path.join(dir, f), 'utf8'), path.join(dir, f))));
}

export async function selectScenarios(names: string[], dir = DEFAULT_SCENARIO_DIR): Promise<Scenario[]> {
  const all = await listScenarios(dir);
  return names.map((n) => {
    const found = all.find((s) => s.name === n);
    if (!found) throw new NotFoundError(`no scenario '${n}'`, { hint: `known scenarios: ${all.map((s) => s.name).join(', ')}` });
    return found;
  });
}
