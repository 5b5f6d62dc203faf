import fs from 'node:fs/promises';
import path from 'node:path';
import { InvalidInputError } from '../../errors.js';
import { inspectManagerBundle } from './inspect.js';
import { AGENT_FILE, codeHash, MANAGER_FILE } from './names.js';

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

/**
 * `ocm-lab addon build DIR --out OUT`: the two bundles as files (OUT/manager.mjs, OUT/agent.mjs), what the project's
 * Dockerfile puts in the addon's image. The manager bundle is checked first; OUT is written whole or not at all.
 */
export async function writeAddonBundles(dir: string, out: string): Promise<{ addon: string; files: string[]; ms: number }> {
  const bundles = await buildAddon(dir);
  const def = await inspectManagerBundle(bundles.manager.code, bundles.manager.hash);
  const target = path.resolve(out);
  await fs.mkdir(path.dirname(target), { recursive: true });
  const staging = await fs.mkdtemp(path.join(path.dirname(target), `.${path.basename(target)}.new-`));
  try {
    await fs.writeFile(path.join(staging, MANAGER_FILE), bundles.manager.code);
    await fs.writeFile(path.join(staging, AGENT_FILE), bundles.agent.code);
    await fs.chmod(staging, 0o755);
    await fs.rm(target, { recursive: true, force: true });
    await fs.rename(staging, target);
  } catch (err) {
    await fs.rm(staging, { recursive: true, force: true });
    throw err;
  }
  return { addon: def.name, files: [MANAGER_FILE, AGENT_FILE].map((f) => path.join(target, f)), ms: bundles.ms };
}
