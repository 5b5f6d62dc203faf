import fs from 'node:fs/promises';
import { DEFAULT_ADDONS, defaultLabConfig, type ClusterConfig, type LabConfig } from '../config/index.js';
import { downLab, upLab } from '../lab/lifecycle.js';
import { labDir } from '../paths.js';
import { withBenchLabHome } from './home.js';
import { labProcessesByCluster, memoryOf, processLabel, type MemoryTotals } from './lab-memory.js';
import type { Benchmark } from './types.js';
import { stackedLinePlotSvg } from './svg-plot.js';
import { sleep } from '../kube/wait.js';

const DEFAULT_SPOKES = [1, 2, 5, 10, 20];
const SETTLE_MS = 15_000;

/** A lab of one hub (vpc-1) and `spokes` managed clusters spread over vpc-2 and vpc-3, with the default addons. */
export function scaleLabConfig(spokes: number, name = 'scale'): LabConfig {
  const base = defaultLabConfig();
  const spokeVpcs = spokes > 1 ? ['vpc-2', 'vpc-3'] : ['vpc-2'];
  const clusters: ClusterConfig[] = [{ name: 'hub', vpc: 'vpc-1', hub: true }];
  for (let i = 1; i <= spokes; i++) clusters.push({ name: `cluster${i}`, vpc: spokeVpcs[(i - 1) % spokeVpcs.length]!, hub: false });
  return { ...base, name, vpcs: [{ name: 'vpc-1' }, ...spokeVpcs.map((v) => ({ name: v }))], clusters, addons: [...DEFAULT_ADDONS] };
}

interface ScalePoint {
  spokes: number;
  upMs: number;
  downMs: number;
  memory: MemoryTotals;
  inotifyInstances: number;
  openFiles: number;
  /** PSS (kB) by process kind of one spoke (cluster1) and of the hub. */
  spokeBreakdown: [string, number][];
  hubPssKb: number;
}

/** Open file descriptors of these processes, and how many of them are inotify instances. */
async function descriptors(pids: Iterable<number>): Promise<{ open: number; inotify: number }> {
  let open = 0;
  let inotify = 0;
  for (const pid of pids) {
    const fds = await fs.readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    open += fds.length;
    for (const fd of fds) if ((await fs.readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')) === 'anon_inode:inotify') inotify++;
  }
  return { open, inotify };
}

async function breakdown(pids: Iterable<number>): Promise<[string, number][]> {
  const byLabel = new Map<string, number>();
  for (const pid of pids) {
    const m = await memoryOf([pid]);
    if (!m.processes) continue;
    const label = await processLabel(pid);
    byLabel.set(label, (byLabel.get(label) ?? 0) + m.pssKb);
  }
  return [...byLabel].sort((a, b) => b[1] - a[1]);
}

async function measure(spokes: number, progress: (line: string) => void): Promise<ScalePoint> {
  const config = scaleLabConfig(spokes);
  try {
    const up = await upLab(config, { renderer: 'silent' });
    progress(`${spokes} spoke(s): up in ${(up.durationMs / 1000).toFixed(1)} s; letting it settle ${SETTLE_MS / 1000} s`);
    await sleep(SETTLE_MS);
    const byCluster = await labProcessesByCluster(labDir(config.name));
    const all = new Set([...byCluster.values()].flatMap((s) => [...s]));
    const memory = await memoryOf(all);
    const fds = await descriptors(all);
    const spokeBreakdown = await breakdown(byCluster.get('cluster1') ?? []);
    const hubPssKb = (await memoryOf(byCluster.get('hub') ?? [])).pssKb;
    const t0 = Date.now();
    await downLab(config);
    return { spokes, upMs: up.durationMs, downMs: Date.now() - t0, memory, inotifyInstances: fds.inotify, openFiles: fds.open, spokeBreakdown, hubPssKb };
  } finally {
    await downLab(config).catch(() => undefined);
  }
}

const gib = (kb: number) => (kb / 1024 / 1024).toFixed(2);
const mib = (kb: number) => (kb / 1024).toFixed(0);
const secs = (ms: number) => (ms / 1000).toFixed(1);

function table(points: ScalePoint[]): string {
  const one = points.find((p) => p.spokes === 1) ?? points[0]!;
  const rows = [
    [
      'spokes',
      'clusters',
      'up (warm cache)',
      'down',
      'processes',
      'RSS GiB',
      'PSS GiB',
      'PSS per added spoke MiB',
      'hub PSS MiB',
      'inotify instances',
      'open fds',
    ],
    ...points.map((p) => [
      String(p.spokes),
      String(p.spokes + 1),
      `${secs(p.upMs)} s`,
      `${secs(p.downMs)} s`,
      String(p.memory.processes),
      gib(p.memory.rssKb),
      gib(p.memory.pssKb),
      p.spokes > one.spokes ? mib((p.memory.pssKb - one.memory.pssKb) / (p.spokes - one.spokes)) : '-',
      mib(p.hubPssKb),
      String(p.inotifyInstances),
      String(p.openFiles),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ')).join('\n');
}

/** The SVG plot of docs/reliability.md: up time, and memory, against the number of spokes. */
function scalePlotSvg(points: ScalePoint[]): string {
  const xs = points.map((p) => p.spokes);
  return stackedLinePlotSvg(
    [
      {
        title: 'ocm-lab up, warm cache (all addons Available)',
        yLabel: 'seconds',
        series: [{ name: 'up', points: points.map((p) => ({ x: p.spokes, y: Number(secs(p.upMs)) })) }],
      },
      {
        title: 'memory of all lab processes, 15 s after up',
        yLabel: 'GiB',
        series: [
          { name: 'PSS', points: points.map((p) => ({ x: p.spokes, y: Number(gib(p.memory.pssKb)) })) },
          { name: 'RSS (shared counted per process)', points: points.map((p) => ({ x: p.spokes, y: Number(gib(p.memory.rssKb)) })) },
        ],
      },
    ],
    'managed clusters (spokes) besides the hub',
    xs,
  );
}

function parseSpokes(args: string[]): number[] {
  const i = args.indexOf('--spokes');
  if (i < 0) return DEFAULT_SPOKES;
  const list = (args[i + 1] ?? '').split(',').map((s) => Number(s.trim()));
  if (!list.length || list.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`--spokes ${args[i + 1] ?? ''}: give a comma-separated list of spoke counts, e.g. 1,2,5,10,20`);
  return list;
}

/**
 * `npm run bench -- scale [--spokes 1,2,5,10,20] [--svg FILE] [--json FILE]`: for each count, a new lab
 * of one hub and that many spokes (3 VPCs, default addons) from a warm cache: `up` time, memory of its
 * processes 15 s later (RSS and PSS), inotify instances and descriptors, `down` time; then one spoke's
 * memory by process. One lab at a time, removed before the next.
 */
export const scaleBenchmark: Benchmark = {
  name: 'scale',
  describe: 'labs of 1, 2, 5, 10 and 20 spokes, one after another: up time, memory (RSS, PSS) per added spoke, inotify instances; --svg FILE writes the plot',
  options: [
    { flag: '--spokes 1,2,5,10,20', describe: 'the spoke counts, one lab each (default 1,2,5,10,20)' },
    { flag: '--svg FILE', describe: 'write the plot' },
    { flag: '--json FILE', describe: 'write the figures' },
  ],
  async run(args) {
    const spokes = parseSpokes(args);
    const svgFile = args.includes('--svg') ? args[args.indexOf('--svg') + 1] : undefined;
    const jsonFile = args.includes('--json') ? args[args.indexOf('--json') + 1] : undefined;
    const progress = (line: string) => process.stdout.write(`  ${line}\n`);
    const points: ScalePoint[] = [];
    await withBenchLabHome(async () => {
      for (const n of spokes) points.push(await measure(n, progress));
    });
    process.stdout.write(`${table(points)}\n`);
    const largest = points[points.length - 1]!;
    process.stdout.write(`\n-- one spoke (cluster1) of the ${largest.spokes}-spoke lab, PSS by process (MiB)\n`);
    for (const [label, kb] of largest.spokeBreakdown) process.stdout.write(`${label.padEnd(48)} ${mib(kb)}\n`);
    process.stdout.write(`${'total'.padEnd(48)} ${mib(largest.spokeBreakdown.reduce((s, [, kb]) => s + kb, 0))}\n`);
    if (svgFile) {
      await fs.writeFile(svgFile, scalePlotSvg(points));
      process.stdout.write(`plot written to ${svgFile}\n`);
    }
    if (jsonFile) await fs.writeFile(jsonFile, `${JSON.stringify(points, null, 2)}\n`);
  },
};
