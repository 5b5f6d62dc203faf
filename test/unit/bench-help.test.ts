import path from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { benchCommand } from '../../src/bench/args.js';
import type { Benchmark } from '../../src/bench/types.js';
import { freshBuild } from '../support/fresh-build.js';
import { useTempDir } from '../support/temp-dir.js';

const MAIN = path.resolve('dist/bench/main.js');
/** Compiled files this test depends on; each must come from this build, not an older one. */
const BUILT = ['dist/bench/main.js', 'dist/bench/args.js', 'dist/bench/registry.js', 'dist/bench/tunnel.js'];

/** A benchmark that fails the test if it is run. */
function fake(name: string, options: Benchmark['options'] = []): Benchmark {
  return {
    name,
    describe: `the ${name} figures`,
    options,
    run: () => Promise.reject(new Error(`${name} ran`)),
  };
}

const FAKES = [fake('tunnel', [{ flag: '--rounds N', describe: 'measure N times' }]), fake('lab')];

describe('bench arguments', () => {
  it('--help or -h anywhere prints the named benchmark and its options, and runs nothing', () => {
    for (const args of [
      ['tunnel', '--help'],
      ['--help', 'tunnel'],
      ['tunnel', '-h'],
      ['tunnel', '--rounds', '3', '--help'],
    ]) {
      const command = benchCommand(args, FAKES);
      expect(command.kind, args.join(' ')).toBe('help');
      if (command.kind !== 'help') continue;
      expect(command.text).toContain('npm run bench -- tunnel [options]');
      expect(command.text).toContain('the tunnel figures');
      expect(command.text).toMatch(/--rounds N {2}measure N times/);
      expect(command.text).not.toContain('the lab figures');
    }
    const lab = benchCommand(['lab', '--help'], FAKES);
    expect(lab.kind === 'help' && lab.text).toContain('No options.');
  });

  it('--help alone lists every benchmark', () => {
    const command = benchCommand(['--help'], FAKES);
    expect(command.kind).toBe('help');
    expect(command.kind === 'help' && command.text).toMatch(/tunnel {2}the tunnel figures\n {2}lab {5}the lab figures/);
  });

  it('without --help: the named benchmarks run (an option value is not a name), all when none is named; an unknown name is refused', () => {
    const one = benchCommand(['tunnel', '--rounds', '3'], FAKES);
    expect(one.kind === 'run' && one.selected.map((b) => b.name)).toEqual(['tunnel']);
    const quick = benchCommand(['--quick', 'lab'], [...FAKES, fake('network', [{ flag: '--quick', describe: 'fewer rounds' }])]);
    expect(quick.kind === 'run' && quick.selected.map((b) => b.name)).toEqual(['lab']);
    const all = benchCommand([], FAKES);
    expect(all.kind === 'run' && all.selected.map((b) => b.name)).toEqual(['tunnel', 'lab']);
    expect(benchCommand(['tunel', '--help'], FAKES)).toEqual({ kind: 'error', message: 'unknown benchmark tunel; known: tunnel, lab' });
  });
});

describe('npm run bench -- <name> --help (the built dist/bench/main.js)', () => {
  const tmp = useTempDir('ocm-lab-bench-help-');
  let names: string[] = [];

  async function bench(args: string[]) {
    const started = Date.now();
    // A home of its own: a benchmark that ran anyway would make its labs there, not in the user's.
    const env = { ...process.env, OCM_LAB_HOME: path.join(tmp.path, 'home'), OCM_LAB_CACHE_DIR: path.join(tmp.path, 'cache') };
    const r = await execa(process.execPath, [MAIN, ...args], { reject: false, env, timeout: 60_000 });
    return { exitCode: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr), ms: Date.now() - started };
  }

  beforeAll(async () => {
    await freshBuild(BUILT);
    const help = await bench(['--help']);
    expect(help.exitCode, help.stderr).toBe(0);
    names = [...help.stdout.slice(help.stdout.indexOf('Benchmarks:')).matchAll(/^ {2}(\S+) {2}/gm)].map((m) => m[1]!);
  }, 360_000);

  it('lists every benchmark, the tunnel among them', () => {
    expect(names).toContain('tunnel');
    expect(names.length).toBeGreaterThanOrEqual(9);
  });

  it('every benchmark: help on stdout, exit 0, nothing run (no "== name:" header, no stderr, a fast exit)', async () => {
    for (const name of names) {
      for (const flag of name === 'tunnel' ? ['--help', '-h'] : ['--help']) {
        const r = await bench([name, flag]);
        expect(r.exitCode, `${name} ${flag}: ${r.stderr}`).toBe(0);
        expect(r.stdout).toContain(`npm run bench -- ${name}`);
        expect(r.stdout).not.toContain(`== ${name}:`);
        expect(r.stderr).toBe('');
        // Loading the benchmarks' modules takes well under a second here; any benchmark takes far longer.
        expect(r.ms, `${name} ${flag}`).toBeLessThan(15_000);
      }
    }
    const tunnel = await bench(['tunnel', '--help']);
    expect(tunnel.stdout).toContain('--rounds N');
    expect(tunnel.stdout).toContain('--link loopback|veth');
  }, 300_000);
});
