import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultLabConfig } from '../config/defaults.js';
import { loadLabConfig } from '../config/load.js';
import { hubAdminKubeconfig } from '../ocm/status.js';

const CLI = fileURLToPath(new URL('../cli/main.js', import.meta.url));
const DEFAULT_RUNS = 10;

interface Subject {
  label: string;
  file: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
}

interface Options {
  runs: number;
  /** The lab file the CLI is given (--config), or the default lab. */
  config?: string;
  /** `--proxy SA`: also time `proxy kubectl` with this ManagedServiceAccount (the lab must be up). */
  sa?: string;
  cluster: string;
  /** `--compare MAIN`: another build's dist/cli/main.js, timed in the same rounds (before/after figures). */
  compare?: string;
  /** clusteradm to time beside `proxy kubectl`: --clusteradm PATH, else `clusteradm` on PATH when there is one. */
  clusteradm?: string;
}

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  if (i >= 0) return args[i + 1];
  return args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

async function onPath(name: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const file = path.join(dir, name);
    if (
      await fs.access(file, fs.constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return file;
  }
  return undefined;
}

/** Wall time of one run to its exit; a run that fails is an error (a benchmark of an error path would say nothing). */
function timeOnce(s: Subject): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(s.file, s.args, { stdio: ['ignore', 'ignore', 'pipe'], env: s.env ?? process.env });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const ms = performance.now() - started;
      if (code === 0) resolve(ms);
      else reject(new Error(`${[s.file, ...s.args].join(' ')} exited with ${code}: ${stderr.trim().split('\n').slice(-3).join(' ')}`));
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? NaN;

/** The subjects in turn, `runs` rounds (interleaved, so that a busy moment of the machine hits every one alike); one warm-up each. */
async function timeAll(subjects: Subject[], runs: number): Promise<number[][]> {
  for (const s of subjects) await timeOnce(s);
  const times = subjects.map(() => [] as number[]);
  for (let round = 0; round < runs; round++) for (const [i, s] of subjects.entries()) times[i]!.push(await timeOnce(s));
  return times;
}

function report(subjects: Subject[], times: number[][], baseOf: (label: string) => string): void {
  const medians = new Map(subjects.map((s, i) => [s.label, median(times[i]!)]));
  for (const [i, s] of subjects.entries()) {
    const xs = times[i]!;
    const base = baseOf(s.label);
    const ratio = base === s.label ? '' : `   ×${((medians.get(s.label) ?? NaN) / (medians.get(base) ?? NaN)).toFixed(2)} of ${base}`;
    const range = `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
    process.stdout.write(`  ${s.label.padEnd(64)} median ${(medians.get(s.label) ?? NaN).toFixed(0).padStart(5)} ms   range ${range.padStart(9)} ms${ratio}\n`);
  }
}

function parseOptions(args: string[]): Options {
  const runs = Number(flag(args, 'runs') ?? DEFAULT_RUNS);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs ${flag(args, 'runs')}: give a whole number of runs`);
  return {
    runs,
    config: flag(args, 'config'),
    sa: flag(args, 'proxy'),
    cluster: flag(args, 'cluster') ?? 'cluster1',
    clusteradm: flag(args, 'clusteradm'),
    compare: flag(args, 'compare'),
  };
}

const KUBECTL_ARGS = ['get', '--raw', '/version'];

/** `proxy kubectl` of the build whose dist/cli/main.js is `main`. */
function proxySubject(o: Options & { sa: string }, main: string, tag: string): Subject {
  const args = [main, ...(o.config ? ['--config', o.config] : []), 'proxy', 'kubectl', '--cluster', o.cluster, '--sa', o.sa, '--', ...KUBECTL_ARGS];
  return { label: `ocm-lab proxy kubectl --cluster ${o.cluster} -- ${KUBECTL_ARGS.join(' ')}${tag}`, file: process.execPath, args };
}

/** The same request through clusteradm, as the lab's hub admin; null when there is no clusteradm. */
async function clusteradmSubject(o: Options & { sa: string }): Promise<Subject | null> {
  const clusteradm = o.clusteradm ?? (await onPath('clusteradm'));
  if (!clusteradm) return null;
  const config = o.config ? await loadLabConfig(o.config) : defaultLabConfig();
  return {
    label: `clusteradm proxy kubectl --cluster ${o.cluster} --args '${KUBECTL_ARGS.join(' ')}'`,
    file: clusteradm,
    args: ['proxy', 'kubectl', `--cluster=${o.cluster}`, `--sa=${o.sa}`, `--args=${KUBECTL_ARGS.join(' ')}`],
    env: { ...process.env, KUBECONFIG: hubAdminKubeconfig(config) },
  };
}

/**
 * Start-up of the CLI (issue 29, item 6): `--version` and `status` beside a bare
 * `node -e 0`, and, on a lab that is up (`--proxy SA`), `proxy kubectl` per
 * command beside clusteradm's. `status` is timed on whatever lab `--config`
 * names (with none up, it answers "not up").
 */
export const startupBenchmark = {
  name: 'startup',
  describe: 'CLI start-up: node -e 0, ocm-lab --version, status, and (--proxy SA, a lab up) proxy kubectl beside clusteradm',
  async run(args: string[]): Promise<void> {
    const o = parseOptions(args);
    const configArgs = o.config ? ['--config', o.config] : [];
    const builds = [CLI, ...(o.compare ? [path.resolve(o.compare)] : [])];
    const tag = (main: string) => (main === CLI ? '' : ` (${main})`);
    const local: Subject[] = [
      { label: 'node -e 0', file: process.execPath, args: ['-e', '0'] },
      ...builds.map((main) => ({ label: `ocm-lab --version${tag(main)}`, file: process.execPath, args: [main, '--version'] })),
      ...builds.map((main) => ({ label: `ocm-lab status${tag(main)}`, file: process.execPath, args: [main, ...configArgs, 'status'] })),
    ];
    process.stdout.write(`start-up, ${o.runs} runs each, interleaved (wall time to exit):\n`);
    report(local, await timeAll(local, o.runs), () => 'node -e 0');
    if (!o.sa) {
      process.stdout.write('  (proxy kubectl: give --proxy SA, a ManagedServiceAccount in the cluster namespace, with the lab up)\n');
      return;
    }
    const withSa = { ...o, sa: o.sa };
    const clusteradm = await clusteradmSubject(withSa);
    const proxy = [...builds.map((main) => proxySubject(withSa, main, tag(main))), ...(clusteradm ? [clusteradm] : [])];
    process.stdout.write(`proxy kubectl per command, ${o.runs} runs each, interleaved:\n`);
    report(proxy, await timeAll(proxy, o.runs), (label) => clusteradm?.label ?? label);
    if (!clusteradm) process.stdout.write('  (no clusteradm on PATH: give --clusteradm PATH to time it beside)\n');
  },
};
