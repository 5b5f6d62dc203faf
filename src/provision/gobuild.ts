import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { MissingPrerequisiteError } from '../errors.js';
import { tail } from '../util/exec.js';
import type { BinaryName, Recipe } from './recipes.js';
import { goDirective, wrapperGoMod } from './wrapper.js';

export type Progress = (line: string) => void;

/** The file name `go build -o dir/` gives a main package: its last path element, skipping a major-version suffix. */
export function goBinaryName(pkg: string): string {
  const parts = pkg.split('/');
  const last = parts[parts.length - 1] ?? pkg;
  return /^v\d+$/.test(last) && parts.length > 1 ? (parts[parts.length - 2] as string) : last;
}

export async function goVersion(): Promise<[number, number]> {
  const r = await execa('go', ['env', 'GOVERSION'], { reject: false });
  const m = /go(\d+)\.(\d+)/.exec(String(r.stdout));
  if (r.exitCode !== 0 || !m) {
    throw new MissingPrerequisiteError('no Go toolchain found (go is not on PATH)', {
      hint: 'install Go ≥ 1.25, or put the binaries (kube-apiserver, kube-controller-manager, kubectl, etcd) in a directory and pass --bin-dir',
    });
  }
  return [Number(m[1]), Number(m[2])];
}

function goEnv(recipe: Recipe): NodeJS.ProcessEnv {
  const noSumDb = [process.env.GONOSUMDB, ...recipe.noSumDb].filter(Boolean).join(',');
  return {
    ...process.env,
    CGO_ENABLED: '0',
    GOFLAGS: '-mod=mod -buildvcs=false',
    ...(noSumDb ? { GONOSUMDB: noSumDb } : {}),
  };
}

/** `go mod download -json module@version` → the module's source dir and go.mod file (read-only, in the module cache). */
export async function downloadModule(module: string, version: string, env: NodeJS.ProcessEnv = process.env): Promise<{ dir: string; goMod: string }> {
  const r = await execa('go', ['mod', 'download', '-json', `${module}@${version}`], { reject: false, env, cwd: '/' });
  let info: { Dir?: string; GoMod?: string; Error?: string } = {};
  try {
    info = JSON.parse(String(r.stdout)) as typeof info;
  } catch {
    /* reported below */
  }
  if (r.exitCode !== 0 || !info.Dir || !info.GoMod) {
    throw new MissingPrerequisiteError(
      `go mod download ${module}@${version} failed (exit ${r.exitCode ?? '?'}): ${info.Error ?? tail(String(r.stderr || r.stdout), 10)}`,
      { hint: 'the Go module proxy (go env GOPROXY) must be reachable' },
    );
  }
  return { dir: info.Dir, goMod: info.GoMod };
}

/**
 * Builds every binary of a recipe with one `go build` in a generated wrapper
 * module under `workDir`, writing them into `outDir`. Reports progress from
 * go's own "downloading" lines and the elapsed time.
 */
export async function buildRecipe(recipe: Recipe, names: BinaryName[], workDir: string, outDir: string, progress: Progress): Promise<void> {
  const [major, minor] = await goVersion();
  if (major < recipe.minGo[0] || (major === recipe.minGo[0] && minor < recipe.minGo[1])) {
    throw new MissingPrerequisiteError(`Go ${major}.${minor} is too old to build ${recipe.module}@${recipe.version} (needs ≥ ${recipe.minGo.join('.')})`, {
      hint: 'install a newer Go, or provide the binaries with --bin-dir',
    });
  }
  const env = goEnv(recipe);
  progress(`fetching ${recipe.module}@${recipe.version}`);
  const upstream = await downloadModule(recipe.module, recipe.version, env);
  const upstreamGoMod = await fs.readFile(upstream.goMod, 'utf8');
  await fs.rm(workDir, { recursive: true, force: true });
  await fs.mkdir(workDir, { recursive: true });
  await fs.writeFile(path.join(workDir, 'go.mod'), wrapperGoMod(recipe, upstreamGoMod, goDirective(upstreamGoMod)));
  // The upstream go.sum vouches for the module's dependencies without asking the checksum database.
  const upstreamSum = await fs.readFile(path.join(upstream.dir, 'go.sum'), 'utf8').catch(() => '');
  await fs.writeFile(path.join(workDir, 'go.sum'), upstreamSum);

  const packages = names.map((n) => recipe.packages[n] as string);
  const tmpOut = path.join(workDir, 'out');
  await fs.mkdir(tmpOut, { recursive: true });
  const args = ['build', '-trimpath', '-ldflags', ['-s', '-w', ...recipe.ldflags].join(' '), '-o', `${tmpOut}/`, ...packages];
  const started = Date.now();
  let downloads = 0;
  let phase = 'resolving modules';
  const child = execa('go', args, { cwd: workDir, env, reject: false, all: true, buffer: true });
  child.stderr?.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.startsWith('go: downloading')) {
        downloads++;
        phase = `downloading modules (${downloads})`;
      }
    }
  });
  const ticker = setInterval(() => {
    const secs = Math.round((Date.now() - started) / 1000);
    progress(`${recipe.id}: ${downloads && phase.startsWith('downloading') ? phase : 'compiling'} — ${secs} s (first build takes minutes)`);
    if (phase.startsWith('downloading')) phase = 'compiling';
  }, 5_000);
  const result = await child.finally(() => clearInterval(ticker));
  if (result.exitCode !== 0) {
    throw new MissingPrerequisiteError(
      `building ${recipe.module}@${recipe.version} failed: go ${args.join(' ')} (in ${workDir}) exited with status ${String(result.exitCode)}\n--- output (last lines) ---\n${tail(String(result.all ?? ''), 25)}`,
      { hint: 'check that the Go module proxy is reachable; or provide the binaries with --bin-dir' },
    );
  }
  await fs.mkdir(outDir, { recursive: true });
  for (const name of names) {
    const final = path.join(outDir, name);
    await fs.rename(path.join(tmpOut, goBinaryName(recipe.packages[name] as string)), `${final}.tmp`);
    await fs.rename(`${final}.tmp`, final);
  }
  progress(`${recipe.id}: built ${names.join(', ')} in ${Math.round((Date.now() - started) / 1000)} s`);
}
