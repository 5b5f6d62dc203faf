import fs from 'node:fs/promises';
import path from 'node:path';
import { MissingPrerequisiteError } from '../errors.js';
import { tail } from '../util/exec.js';
import { GoBuildProgress } from './progress.js';
import type { BinaryName, Recipe } from './recipes.js';
import { MIN_GO } from './versions.js';
import { goDirective, wrapperGoMod } from './wrapper.js';

export type Progress = (line: string) => void;

/** One `go build` of some binaries of a recipe, written into `outDir` under their own names. */
export interface BuildRequest {
  recipe: Recipe;
  names: BinaryName[];
  /** Scratch directory for the wrapper module (`<cache>/build/<recipe>`). */
  workDir: string;
  outDir: string;
  progress: Progress;
  signal?: AbortSignal;
  /**
   * The module's own tree (a verified source archive, source-tree.ts) to build in place instead of fetching the
   * module through the Go module proxy into a wrapper module; `from` names the archive in progress and errors.
   */
  source?: { dir: string; from: string };
}

export type Builder = (request: BuildRequest) => Promise<void>;

/** The file name `go build -o dir/` gives a main package: its last path element, skipping a major-version suffix. */
export function goBinaryName(pkg: string): string {
  const parts = pkg.split('/');
  const last = parts[parts.length - 1] ?? pkg;
  return /^v\d+$/.test(last) && parts.length > 1 ? (parts[parts.length - 2] as string) : last;
}

/** Environment of every go command we run: no cgo, wrapper go.mod may be updated, our GONOSUMDB prefixes added to the user's. */
export function goEnv(noSumDb: string[], base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const prefixes = [base.GONOSUMDB, ...noSumDb].filter(Boolean).join(',');
  return { ...base, CGO_ENABLED: '0', GOFLAGS: '-mod=mod -buildvcs=false', ...(prefixes ? { GONOSUMDB: prefixes } : {}) };
}

/** What one `go build` runs: its arguments, environment and directory. */
export interface GoCommand {
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
}

function buildArgs(recipe: Recipe, names: BinaryName[], outDir: string): string[] {
  const packages = names.map((n) => recipe.packages[n] as string);
  return ['build', '-v', '-trimpath', '-ldflags', ['-s', '-w', ...recipe.ldflags].join(' '), '-o', `${outDir}/`, ...packages];
}

/**
 * The build of a module inside its own tree (a source archive): no wrapper module, the main module is the
 * module itself, so its go.mod's replaces count. With a `vendor/` (`vendored`), `-mod=vendor` builds offline
 * from it; without, `-mod=readonly` takes the dependencies go.sum names from the module proxy. GOWORK=off: a
 * go.work of the user's must not pull other modules in. Same flags and `-X` stamps as the wrapper build.
 */
export function sourceBuildCommand(
  recipe: Recipe,
  names: BinaryName[],
  sourceDir: string,
  outDir: string,
  vendored: boolean,
  base: NodeJS.ProcessEnv = process.env,
): GoCommand {
  const env = { ...goEnv(recipe.noSumDb, base), GOFLAGS: `${vendored ? '-mod=vendor' : '-mod=readonly'} -buildvcs=false`, GOWORK: 'off' };
  return { args: buildArgs(recipe, names, outDir), env, cwd: sourceDir };
}

/**
 * Checks there is a Go toolchain new enough to build; `missing` names what it
 * was going to build so the error can say what to provide instead.
 */
export async function requireGo(missing: string): Promise<void> {
  const { execa } = await import('execa');
  const r = await execa('go', ['env', 'GOVERSION'], { reject: false });
  const m = /go(\d+)\.(\d+)/.exec(String(r.stdout ?? ''));
  const want = `Go ≥ ${MIN_GO.join('.')}`;
  const instead = `put ${missing} in a directory and pass --bin-dir DIR (or set $OCM_LAB_BIN_DIR)`;
  if (r.exitCode !== 0 || !m) {
    throw new MissingPrerequisiteError(`cannot provision ${missing}: no Go toolchain found ('go' is not on PATH) to build them from the Go module proxy`, {
      hint: `install ${want}, or ${instead}`,
    });
  }
  const [major, minor] = [Number(m[1]), Number(m[2])];
  if (major < MIN_GO[0] || (major === MIN_GO[0] && minor < MIN_GO[1])) {
    throw new MissingPrerequisiteError(`cannot provision ${missing}: Go ${major}.${minor} is too old to build them (needs ${want})`, {
      hint: `install ${want}, or ${instead}`,
    });
  }
}

/** `go mod download -json module@version` → the module's read-only source dir and its go.mod file in the module cache. */
export async function downloadModule(
  module: string,
  version: string,
  opts: { env?: NodeJS.ProcessEnv; signal?: AbortSignal } = {},
): Promise<{ dir: string; goMod: string }> {
  const args = ['mod', 'download', '-json', `${module}@${version}`];
  const { execa } = await import('execa');
  const r = await execa('go', args, { reject: false, env: opts.env ?? process.env, cwd: '/', cancelSignal: opts.signal });
  opts.signal?.throwIfAborted();
  let info: { Dir?: string; GoMod?: string; Error?: string } = {};
  try {
    info = JSON.parse(String(r.stdout)) as typeof info;
  } catch {
    /* reported below */
  }
  if (r.exitCode !== 0 || !info.Dir || !info.GoMod) {
    const printed = info.Error ?? tail(String(r.stderr || r.stdout || r.shortMessage || ''), 10);
    throw new MissingPrerequisiteError(`go ${args.join(' ')} failed (exit status ${r.exitCode ?? '?'}): ${printed}`, {
      hint: `the Go module proxy (go env GOPROXY) must serve ${module}@${version}`,
    });
  }
  return { dir: info.Dir, goMod: info.GoMod };
}

/**
 * Builds binaries of a recipe with one `go build` in a wrapper module generated
 * under `workDir` (never part of the repository) — or, given a `source` tree, in
 * that tree (sourceBuildCommand) — then renames each into `outDir` — a rename,
 * so a running copy of the old binary is not disturbed and nobody sees a
 * half-written file.
 */
export const goBuild: Builder = async ({ recipe, names, workDir, outDir, progress, signal, source }) => {
  await fs.rm(workDir, { recursive: true, force: true });
  await fs.mkdir(workDir, { recursive: true });
  const tmpOut = path.join(workDir, 'out');
  let command: GoCommand;
  if (source) {
    const vendored = await fs.stat(path.join(source.dir, 'vendor', 'modules.txt')).then(
      () => true,
      () => false,
    );
    progress(`building from ${source.from}${vendored ? ' (vendor/, offline)' : ''}`);
    command = sourceBuildCommand(recipe, names, source.dir, tmpOut, vendored);
  } else {
    const env = goEnv(recipe.noSumDb);
    progress(`fetching ${recipe.module}@${recipe.version}`);
    const upstream = await downloadModule(recipe.module, recipe.version, { env, signal });
    const upstreamGoMod = await fs.readFile(upstream.goMod, 'utf8');
    await fs.writeFile(path.join(workDir, 'go.mod'), wrapperGoMod(recipe, upstreamGoMod, goDirective(upstreamGoMod)));
    // The upstream go.sum vouches for its dependencies, so the checksum database is asked only about the rest.
    await fs.writeFile(path.join(workDir, 'go.sum'), await fs.readFile(path.join(upstream.dir, 'go.sum'), 'utf8').catch(() => ''));
    command = { args: buildArgs(recipe, names, tmpOut), env, cwd: workDir };
  }
  const { args, env, cwd } = command;
  await fs.mkdir(tmpOut, { recursive: true });
  const watcher = new GoBuildProgress(progress, Object.fromEntries(names.map((n) => [recipe.packages[n] as string, n])));
  const { execa } = await import('execa');
  const child = execa('go', args, {
    cwd,
    env,
    reject: false,
    all: true,
    cancelSignal: signal,
    // go passes an interrupt on to the compilers and linkers it started; a plain SIGTERM would orphan them.
    killSignal: 'SIGINT',
    forceKillAfterDelay: 10_000,
  });
  child.stderr?.on('data', (chunk: Buffer) => watcher.feed(chunk.toString('utf8')));
  const heartbeat = setInterval(() => watcher.heartbeat(), 15_000);
  const result = await child.finally(() => clearInterval(heartbeat));
  signal?.throwIfAborted();
  if (result.exitCode !== 0) {
    const printed = String(result.all ?? '')
      .split('\n')
      .filter((l) => !l.startsWith('go: downloading ') && !/^[\w.~-]+(\/[\w.~+-]+)*$/.test(l.trim()))
      .join('\n');
    throw new MissingPrerequisiteError(
      `building ${recipe.title} failed: go ${args.join(' ')} ` +
        `(in ${cwd}, CGO_ENABLED=0 GOFLAGS=${env.GOFLAGS}${env.GONOSUMDB ? ` GONOSUMDB=${env.GONOSUMDB}` : ''}) ` +
        `exited with status ${String(result.exitCode ?? result.signal)}\n--- output (last lines) ---\n${tail(printed, 25)}`,
      {
        hint: source
          ? `the tree of ${source.from} did not build with this Go (go.mod names the Go it needs); or provide the binaries with --bin-dir`
          : `check that the Go module proxy (go env GOPROXY) is reachable and serves ${recipe.module}@${recipe.version}; ` +
            'or provide the binaries with --bin-dir',
      },
    );
  }
  await fs.mkdir(outDir, { recursive: true });
  for (const name of names) await fs.rename(path.join(tmpOut, goBinaryName(recipe.packages[name] as string)), path.join(outDir, name));
  progress(`built ${names.join(', ')} in ${watcher.elapsed()}`);
};
