import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { defaultLabConfig, hubAdminKubeconfig } from '../config/defaults.js';
import { loadLabConfig } from '../config/load.js';
import { CLI_MAIN } from '../paths.js';
import type { Benchmark } from './types.js';

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
  /** `--node A,B`: other Node.js binaries, each running every node subject in the same rounds (the bench's own Node first). */
  nodes: string[];
  /** `--cpu`: also the CPU time (user + system, the process and its children) of each run, from /usr/bin/time. */
  cpu: boolean;
}

interface Run {
  wallMs: number;
  /** Undefined without --cpu. */
  cpuMs?: number;
}

const TIME = '/usr/bin/time';

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

/**
 * Wall time of one run to its exit, and with `cpu` its CPU time (GNU time's %U + %S, written to a
 * file of its own); a run that fails is an error (a benchmark of an error path would say nothing).
 */
function timeOnce(s: Subject, cpu: boolean): Promise<Run> {
  const cpuFile = cpu ? path.join(os.tmpdir(), `ocm-lab-startup-${process.pid}.time`) : '';
  const [file, args] = cpu ? [TIME, ['-f', '%U %S', '-o', cpuFile, s.file, ...s.args]] : [s.file, s.args];
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'], env: s.env ?? process.env });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const wallMs = performance.now() - started;
      if (code !== 0) {
        if (cpu) void fs.rm(cpuFile, { force: true });
        reject(new Error(`${[s.file, ...s.args].join(' ')} exited with ${code}: ${stderr.trim().split('\n').slice(-3).join(' ')}`));
        return;
      }
      if (!cpu) return resolve({ wallMs });
      fs.readFile(cpuFile, 'utf8')
        .finally(() => fs.rm(cpuFile, { force: true }))
        .then((text) => {
          const [user = NaN, system = NaN] = text.trim().split('\n').pop()!.split(' ').map(Number);
          resolve({ wallMs, cpuMs: (user + system) * 1000 });
        }, reject);
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? NaN;

/** The subjects in turn, `runs` rounds (interleaved, so that a busy moment of the machine hits every one alike); one warm-up each. */
async function timeAll(subjects: Subject[], o: Options): Promise<Run[][]> {
  for (const s of subjects) await timeOnce(s, o.cpu);
  const times = subjects.map(() => [] as Run[]);
  for (let round = 0; round < o.runs; round++) for (const [i, s] of subjects.entries()) times[i]!.push(await timeOnce(s, o.cpu));
  return times;
}

function report(subjects: Subject[], runs: Run[][], baseOf: (label: string) => string): void {
  const medians = new Map(subjects.map((s, i) => [s.label, median(runs[i]!.map((r) => r.wallMs))]));
  const width = Math.max(...subjects.map((s) => s.label.length));
  for (const [i, s] of subjects.entries()) {
    const xs = runs[i]!.map((r) => r.wallMs);
    const base = baseOf(s.label);
    const ratio = base === s.label ? '' : `   ×${((medians.get(s.label) ?? NaN) / (medians.get(base) ?? NaN)).toFixed(2)} of ${base}`;
    const range = `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
    const cpus = runs[i]!.flatMap((r) => (r.cpuMs === undefined ? [] : [r.cpuMs]));
    const cpu = cpus.length ? `   cpu ${median(cpus).toFixed(0).padStart(5)} ms` : '';
    process.stdout.write(
      `  ${s.label.padEnd(width)}   median ${(medians.get(s.label) ?? NaN).toFixed(0).padStart(5)} ms   range ${range.padStart(9)} ms${cpu}${ratio}\n`,
    );
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
    nodes: [process.execPath, ...(flag(args, 'node')?.split(',').filter(Boolean) ?? [])],
    cpu: args.includes('--cpu'),
  };
}

/** ` [node v24.21.0]` when more than one Node runs the subjects, else nothing. */
function nodeTags(nodes: string[]): Map<string, string> {
  const version = (node: string) => execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  return new Map(nodes.map((node) => [node, nodes.length > 1 ? ` [node ${version(node)}]` : '']));
}

const KUBECTL_ARGS = ['get', '--raw', '/version'];

/** `proxy kubectl` of the build whose dist/cli/main.js is `main`, run by `node`. */
function proxySubject(o: Options & { sa: string }, node: string, main: string, tag: string): Subject {
  const args = [main, ...(o.config ? ['--config', o.config] : []), 'proxy', 'kubectl', '--cluster', o.cluster, '--sa', o.sa, '--', ...KUBECTL_ARGS];
  return { label: `ocm-lab proxy kubectl --cluster ${o.cluster} -- ${KUBECTL_ARGS.join(' ')}${tag}`, file: node, args };
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
export const startupBenchmark: Benchmark = {
  name: 'startup',
  describe: 'CLI start-up: node -e 0, ocm-lab --version, status, and (--proxy SA, a lab up) proxy kubectl beside clusteradm',
  options: [
    { flag: '--runs N', describe: 'runs of each subject (default 10)' },
    { flag: '--config FILE', describe: 'the lab file the CLI is given' },
    { flag: '--proxy SA', describe: 'also time proxy kubectl with this ManagedServiceAccount (the lab must be up)' },
    { flag: '--cluster NAME', describe: 'the cluster of proxy kubectl (default cluster1)' },
    { flag: '--clusteradm PATH', describe: 'clusteradm to time beside proxy kubectl (default: the one on PATH)' },
    { flag: '--compare MAIN', describe: "another build's dist/cli/main.js, timed in the same rounds" },
    { flag: '--node A,B', describe: 'other Node.js binaries, each running every node subject in the same rounds' },
    { flag: '--cpu', describe: 'also the CPU time of each run (/usr/bin/time)' },
  ],
  async run(args: string[]): Promise<void> {
    const o = parseOptions(args);
    if (o.cpu) await fs.access(TIME, fs.constants.X_OK).catch(() => Promise.reject(new Error(`--cpu needs GNU time at ${TIME}`)));
    const configArgs = o.config ? ['--config', o.config] : [];
    const builds = [CLI_MAIN, ...(o.compare ? [path.resolve(o.compare)] : [])];
    const nodeTag = nodeTags(o.nodes);
    // Every (node, build) pair, the bench's own Node and this build first.
    const pairs = o.nodes.flatMap((node) => builds.map((main) => ({ node, main, tag: `${main === CLI_MAIN ? '' : ` (${main})`}${nodeTag.get(node)}` })));
    const local: Subject[] = [
      ...o.nodes.map((node) => ({ label: `node -e 0${nodeTag.get(node)}`, file: node, args: ['-e', '0'] })),
      ...pairs.map(({ node, main, tag }) => ({ label: `ocm-lab --version${tag}`, file: node, args: [main, '--version'] })),
      ...pairs.map(({ node, main, tag }) => ({ label: `ocm-lab status${tag}`, file: node, args: [main, ...configArgs, 'status'] })),
    ];
    const nodeOf = (label: string) => `node -e 0${[...nodeTag.values()].find((t) => t && label.endsWith(t)) ?? ''}`;
    process.stdout.write(`start-up, ${o.runs} runs each, interleaved (wall time to exit${o.cpu ? '; cpu: user + system' : ''}):\n`);
    report(local, await timeAll(local, o), nodeOf);
    if (!o.sa) {
      process.stdout.write('  (proxy kubectl: give --proxy SA, a ManagedServiceAccount in the cluster namespace, with the lab up)\n');
      return;
    }
    const withSa = { ...o, sa: o.sa };
    const clusteradm = await clusteradmSubject(withSa);
    const proxy = [...pairs.map(({ node, main, tag }) => proxySubject(withSa, node, main, tag)), ...(clusteradm ? [clusteradm] : [])];
    process.stdout.write(`proxy kubectl per command, ${o.runs} runs each, interleaved:\n`);
    report(proxy, await timeAll(proxy, o), (label) => clusteradm?.label ?? label);
    if (!clusteradm) process.stdout.write('  (no clusteradm on PATH: give --clusteradm PATH to time it beside)\n');
  },
};
