import fs from 'node:fs/promises';
import path from 'node:path';
import { InvalidInputError } from '../../errors.js';
import { codeHash } from './names.js';

export interface AddonBundles {
  manager: { code: string; hash: string };
  agent: { code: string; hash: string };
  /** Wall time of the build. */
  ms: number;
}

/** The two entry points of an addon project. */
function entryPoints(dir: string): { manager: string; agent: string } {
  return { manager: path.join(dir, 'src', 'manager.ts'), agent: path.join(dir, 'src', 'agent.ts') };
}

/**
 * Bundles the project's manager and agent into one ESM file each. `ocm-lab` stays external:
 * at run time the bundle gets the framework inside our image (module-hooks.ts resolves it).
 */
export async function buildAddon(dir: string): Promise<AddonBundles> {
  const started = Date.now();
  const entries = entryPoints(dir);
  for (const [what, file] of Object.entries(entries)) {
    try {
      await fs.access(file);
    } catch {
      throw new InvalidInputError(`${file} does not exist: an addon project needs src/manager.ts and src/agent.ts (the ${what})`, {
        hint: 'create a project with: ocm-lab addon new NAME DIR',
      });
    }
  }
  const { build } = await import('esbuild');
  const one = async (entry: string) => {
    try {
      const result = await build({
        entryPoints: [entry],
        bundle: true,
        write: false,
        format: 'esm',
        platform: 'node',
        target: 'node20',
        external: ['ocm-lab', 'ocm-lab/*'],
        logLevel: 'silent',
        absWorkingDir: dir,
      });
      const code = result.outputFiles[0]?.text ?? '';
      return { code, hash: codeHash(code) };
    } catch (err) {
      const errors = (err as { errors?: { text: string; location?: { file: string; line: number; column: number } | null }[] }).errors;
      const detail = errors?.length
        ? errors.map((e) => (e.location ? `${e.location.file}:${e.location.line}:${e.location.column}: ${e.text}` : e.text)).join('\n')
        : (err as Error).message;
      throw new InvalidInputError(`esbuild could not bundle ${entry}:\n${detail}`, { hint: 'fix the error and save again' });
    }
  };
  const [manager, agent] = await Promise.all([one(entries.manager), one(entries.agent)]);
  return { manager, agent, ms: Date.now() - started };
}
