import fs from 'node:fs/promises';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { execa } from 'execa';

/**
 * Packing this repository as npm would publish it, and installing the result
 * somewhere else, for test/e2e/pack.test.ts.
 */

export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * The environment for nested npm/npx runs: ours without the npm_* variables an
 * outer `npm test` sets (npm_config_prefix and friends would steer the inner npm);
 * `extra` adds variables, or removes them when undefined.
 */
export function cleanNpmEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k)) env[k] = v;
  Object.assign(env, { npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' }, extra);
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  return env;
}

interface RunOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

/** Runs a command and returns its exit code and output, whatever the exit code. */
export async function runCommand(file: string, args: string[], opts: RunOptions): Promise<CommandResult & { timedOut: boolean }> {
  const r = await execa(file, args, { cwd: opts.cwd, env: opts.env ?? cleanNpmEnv(), extendEnv: false, reject: false, timeout: opts.timeoutMs ?? 300_000 });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr), timedOut: r.timedOut };
}

/** runCommand, where a non-zero exit is an error that shows the command, its exit code and both streams. */
async function runChecked(file: string, args: string[], opts: RunOptions): Promise<CommandResult> {
  const r = await runCommand(file, args, opts);
  if (r.exitCode !== 0) {
    throw new Error(
      `${file} ${args.join(' ')} (in ${opts.cwd}) exited ${r.exitCode}${r.timedOut ? ' (timed out)' : ''}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`,
    );
  }
  return r;
}

/**
 * Copies what a clean checkout of the working tree holds (tracked files and
 * new files git does not ignore; no dist/, no node_modules/) into `dest`.
 */
export async function copyCheckout(repoRoot: string, dest: string): Promise<string[]> {
  const listed = (await runChecked('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: repoRoot })).stdout
    .split('\0')
    .filter(Boolean);
  const copied: string[] = [];
  for (const rel of [...new Set(listed)]) {
    const from = path.join(repoRoot, rel);
    const stat = await fs.lstat(from).catch(() => null);
    if (!stat || stat.isDirectory()) continue; // deleted in the working tree, or a submodule
    await fs.mkdir(path.dirname(path.join(dest, rel)), { recursive: true });
    await fs.cp(from, path.join(dest, rel), { verbatimSymlinks: true });
    copied.push(rel);
  }
  return copied;
}

/** `npm pack` in `dir` (its prepack runs) into `outDir`; returns the tarball's path and npm's output. */
export async function npmPack(dir: string, outDir: string): Promise<{ tarball: string; output: CommandResult }> {
  await fs.mkdir(outDir, { recursive: true });
  const output = await runChecked('npm', ['pack', '--pack-destination', outDir, '--loglevel', 'notice'], { cwd: dir, timeoutMs: 600_000 });
  const tarballs = (await fs.readdir(outDir)).filter((f) => f.endsWith('.tgz'));
  if (tarballs.length !== 1)
    throw new Error(`npm pack in ${dir} left ${tarballs.length} tarballs in ${outDir} (${tarballs.join(', ')})\n${output.stdout}\n${output.stderr}`);
  return { tarball: path.join(outDir, tarballs[0] as string), output };
}

/** The paths in a package tarball, without npm's leading `package/`. */
export async function tarballEntries(tarball: string): Promise<string[]> {
  const { stdout } = await runChecked('tar', ['-tzf', tarball], { cwd: path.dirname(tarball) });
  return stdout
    .split('\n')
    .filter((l) => l && !l.endsWith('/'))
    .map((l) => l.replace(/^package\//, ''))
    .sort();
}

/**
 * Installs a tarball into `appDir` as a consumer project would (a package.json
 * with a name and a version of its own, then `npm install <tgz>`).
 */
export async function installTarball(tarball: string, appDir: string): Promise<CommandResult> {
  await fs.mkdir(appDir, { recursive: true });
  await fs.writeFile(path.join(appDir, 'package.json'), `${JSON.stringify({ name: 'ocm-lab-consumer', version: '0.0.0-consumer', private: true }, null, 2)}\n`);
  return runChecked('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel', 'error', tarball], { cwd: appDir, timeoutMs: 600_000 });
}

/** Every `.js` file under `dir`, relative to it. */
async function jsFiles(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.js')).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

/** `yaml` for `yaml`, `@grpc/grpc-js` for `@grpc/grpc-js/build/x.js`. */
function packageNameOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
}

/**
 * The packages compiled code under `dir` imports (static and dynamic imports,
 * require and import.meta.resolve of a literal name) that are neither Node
 * built-ins nor in `allowed`: each as `package (first file that names it)`.
 */
export async function undeclaredImports(dir: string, allowed: readonly string[]): Promise<string[]> {
  const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
  const ok = new Set(allowed);
  const found = new Map<string, string>();
  const patterns = [
    /\bfrom\s*['"]([^'"\s]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"\s]+)['"]\s*\)/g,
    /\bimport\s+['"]([^'"\s]+)['"]/g,
    /\brequire\s*\(\s*['"]([^'"\s]+)['"]\s*\)/g,
    /\bimport\.meta\.resolve\s*\(\s*['"]([^'"\s]+)['"]\s*\)/g,
  ];
  for (const rel of await jsFiles(dir)) {
    const text = await fs.readFile(path.join(dir, rel), 'utf8');
    for (const re of patterns) {
      for (const m of text.matchAll(re)) {
        const spec = m[1] as string;
        if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('file:') || builtins.has(spec) || builtins.has(spec.split('/')[0] as string))
          continue;
        if (spec.startsWith('node:')) continue;
        const name = packageNameOf(spec);
        if (!ok.has(name) && !found.has(name)) found.set(name, rel);
      }
    }
  }
  return [...found].map(([name, file]) => `${name} (${file})`).sort();
}
