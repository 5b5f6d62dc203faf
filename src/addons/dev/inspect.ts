import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { InvalidInputError } from '../../errors.js';
import type { AddonDefinition } from '../framework/types.js';
import { addonNameProblem } from './names.js';

/** The bundle's external framework import, pointed at this package's file (no module hooks needed here). */
function withFrameworkUrl(code: string): string {
  const url = new URL('../framework/public.js', import.meta.url).href;
  return code.replace(/(from\s*|import\s*\(\s*)(["'])ocm-lab\/addon-framework\2/g, (_m, pre: string, q: string) => `${pre}${q}${url}${q}`);
}

/**
 * The AddonDefinition a manager bundle exports, loaded here the way `internal run-addon` loads
 * it on the hub (there module hooks resolve `ocm-lab/addon-framework`; here the import is rewritten):
 * `addon dev` needs its name, and a bundle that exports none fails here, early.
 */
export async function inspectManagerBundle(code: string, hash: string): Promise<AddonDefinition> {
  const file = path.join(os.tmpdir(), `ocm-lab-addon-manager-${process.pid}-${hash}.mjs`);
  await fs.writeFile(file, withFrameworkUrl(code), { mode: 0o600 });
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    throw new InvalidInputError(`importing the manager bundle (src/manager.ts) failed: ${(err as Error).message}`, {
      hint: 'src/manager.ts must run without side effects: it only defines the addon',
    });
  } finally {
    await fs.rm(file, { force: true });
  }
  const def = (mod.default ?? mod.addon) as Partial<AddonDefinition> | undefined;
  if (!def || typeof def !== 'object' || typeof def.name !== 'string' || typeof def.agentManifests !== 'function' || typeof def.installNamespace !== 'string') {
    throw new InvalidInputError('src/manager.ts exports no AddonDefinition: its default export needs name, installNamespace and agentManifests()', {
      hint: "export default { name: 'demo', … } satisfies AddonDefinition",
    });
  }
  const problem = addonNameProblem(def.name);
  if (problem) throw new InvalidInputError(`src/manager.ts: ${problem}`);
  return def as AddonDefinition;
}
