import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { docker } from '../images/docker.js';
import { currentEngine } from '../images/engine/index.js';
import { DEFAULT_ADDONS, defaultLabConfig, type LabConfig } from '../config/index.js';
import { downLab, upLab } from '../lab/lifecycle.js';
import { labDir } from '../paths.js';
import { withBenchLabHome } from './home.js';
import { labRssKb } from './lab-memory.js';
import type { Benchmark } from './types.js';
import { sleep } from '../kube/wait.js';

/** One lab brought up, measured and removed; its table rows. */
async function measureLab(config: LabConfig): Promise<string[][]> {
  let peakKb = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peakKb = Math.max(peakKb, await labRssKb(labDir(config.name)));
      await sleep(250);
    }
  })();
  try {
    const cold = await upLab(config, { renderer: 'silent' });
    const afterUpKb = await labRssKb(labDir(config.name));
    const t0 = Date.now();
    await upLab(config, { renderer: 'silent' });
    const noop = Date.now() - t0;
    const added = await upLab({ ...config, clusters: [...config.clusters, { name: 'cluster3', vpc: 'vpc-2', hub: false }] }, { renderer: 'silent' });
    const removed = await upLab(config, { renderer: 'silent' });
    // The addon steps start together once OCM accepted the spokes: the slowest is when every addon is Available.
    const addonTitles = new Set<string>(config.addons);
    const addonSteps = cold.steps.filter((s) => addonTitles.has(s.title));
    // let the control planes settle, then sample steady-state memory
    await sleep(15_000);
    const steadyKb = await labRssKb(labDir(config.name));
    sampling = false;
    await sampler;
    return [
      ['up (new lab, binaries cached)', `${(cold.durationMs / 1000).toFixed(1)} s`],
      ...cold.steps.map((s) => [`  ${s.title}`, `${(s.durationMs / 1000).toFixed(1)} s  (${s.result})`]),
      ...(addonSteps.length ? [['every addon Available, after OCM is up', `${(Math.max(...addonSteps.map((s) => s.durationMs)) / 1000).toFixed(1)} s`]] : []),
      ['second up (no-op)', `${(noop / 1000).toFixed(1)} s`],
      ['cluster add cluster3 (created, joined, addons Available)', `${(added.durationMs / 1000).toFixed(1)} s`],
      ['cluster remove cluster3 (deregistered, deleted)', `${(removed.durationMs / 1000).toFixed(1)} s`],
      ['RSS right after up', `${(afterUpKb / 1024).toFixed(0)} MiB`],
      ['RSS after 15 s', `${(steadyKb / 1024).toFixed(0)} MiB`],
      ['peak RSS sampled (every 250 ms)', `${(peakKb / 1024).toFixed(0)} MiB`],
    ];
  } finally {
    sampling = false;
    await sampler;
    await downLab(config).catch(() => undefined);
  }
}

/** Memory (kB) the lab's containers use on a kind lab, as the engine's `stats` reports it: its nodes and its hub endpoint. */
async function kindLabMemoryKb(lab: string): Promise<number> {
  const r = await docker((await currentEngine()).statsArgs(), { allowFailure: true });
  const units: Record<string, number> = { B: 1 / 1024, KiB: 1, kB: 1, MiB: 1024, MB: 1000, GiB: 1024 * 1024, GB: 1000 * 1000 };
  let total = 0;
  for (const line of String(r.stdout).split('\n')) {
    const [name, usage] = line.split('\t');
    if (!name || !usage || !(name.startsWith(`${lab}-`) || name === `ocm-lab-${lab}-hub-endpoint`)) continue;
    const m = /^([\d.]+)\s*([A-Za-z]+)/.exec(usage.trim());
    if (m) total += Number(m[1]) * (units[m[2] as string] ?? 0);
  }
  return total;
}

interface RuntimeFigures {
  coldMs: number;
  noopMs: number;
  memoryKb: number;
  steps: string[][];
  /** `up` with a third spoke added, then without it again (kind only: the route an addon image takes to a new node). */
  addMs?: number;
  removeMs?: number;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The default lab on one runtime: new-lab `up` (binaries and images cached), a second `up`, memory after 15 s; on kind `cluster add`/`remove`. */
async function measureOn(runtime: 'local' | 'kind', config: LabConfig): Promise<RuntimeFigures> {
  try {
    const cold = await upLab(config, { renderer: 'silent', runtime });
    const t0 = Date.now();
    await upLab(config, { renderer: 'silent', runtime });
    const noopMs = Date.now() - t0;
    await sleep(15_000);
    const memoryKb = runtime === 'kind' ? await kindLabMemoryKb(config.name) : await labRssKb(labDir(config.name));
    const steps = cold.steps.map((s) => [`  ${s.title}`, seconds(s.durationMs)]);
    if (runtime === 'local') return { coldMs: cold.durationMs, noopMs, memoryKb, steps };
    const added = await upLab({ ...config, clusters: [...config.clusters, { name: 'cluster3', vpc: 'vpc-2', hub: false }] }, { renderer: 'silent', runtime });
    const removed = await upLab(config, { renderer: 'silent', runtime });
    const addSteps = added.steps.map((s) => [`  cluster add: ${s.title}`, seconds(s.durationMs)]);
    return { coldMs: cold.durationMs, noopMs, memoryKb, steps: [...steps, ...addSteps], addMs: added.durationMs, removeMs: removed.durationMs };
  } finally {
    await downLab(config, { runtime }).catch(() => undefined);
  }
}

/** `lab --runtime kind`: the default lab on the local runtime and on kind, one after the other in one run (`--kind-only`: kind alone). */
async function compareWithKind(kindOnly: boolean): Promise<void> {
  const local = kindOnly ? undefined : await measureOn('local', { ...defaultLabConfig(), name: 'bench' });
  const kind = await measureOn('kind', { ...defaultLabConfig(), name: 'benchkind' });
  const mib = (kb: number) => `${(kb / 1024).toFixed(0)} MiB`;
  const ratio = (k: number, l: number | undefined) => (l === undefined ? '' : `×${(k / l).toFixed(2)}`);
  const rows = [
    ['', 'local', 'kind', 'kind / local'],
    ['up, new lab (binaries and images cached)', local ? seconds(local.coldMs) : '', seconds(kind.coldMs), ratio(kind.coldMs, local?.coldMs)],
    ['second up (no-op)', local ? seconds(local.noopMs) : '', seconds(kind.noopMs), ratio(kind.noopMs, local?.noopMs)],
    [
      'memory 15 s after up (local: RSS of its processes; kind: docker stats of its containers)',
      local ? mib(local.memoryKb) : '',
      mib(kind.memoryKb),
      ratio(kind.memoryKb, local?.memoryKb),
    ],
    ['cluster add cluster3 (created, joined, addons Available)', '', seconds(kind.addMs!), ''],
    ['cluster remove cluster3 (deregistered, deleted)', '', seconds(kind.removeMs!), ''],
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) process.stdout.write(`${r.map((c, i) => c.padEnd(widths[i]!)).join('  ')}\n`);
  for (const [label, m] of [
    ['local', local],
    ['kind', kind],
  ] as const) {
    if (!m) continue;
    process.stdout.write(`\n-- steps of the new-lab up on ${label}\n`);
    const width = Math.max(...m.steps.map((r) => r[0]!.length));
    for (const [k, v] of m.steps) process.stdout.write(`${k!.padEnd(width)}  ${v}\n`);
  }
}

/**
 * `lab --connected`: the default lab on kind from cold in the simulated connected world, on the official path beside the
 * built path (test/support/connected-world/lab-bench.ts). The world is test support, outside src/: it is bundled here at
 * run time, at the same depth below the repository as its source (its engine script is found relative to itself).
 */
async function connectedColdPaths(): Promise<void> {
  const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  const bundle = path.join(repo, 'dist', 'bench', 'connected-world', 'lab-bench.mjs');
  const { build } = await import('esbuild');
  await build({
    entryPoints: [path.join(repo, 'test', 'support', 'connected-world', 'lab-bench.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outfile: bundle,
    logLevel: 'warning',
  });
  const { benchConnectedKind } = (await import(pathToFileURL(bundle).href)) as { benchConnectedKind(repo: string): Promise<string> };
  process.stdout.write(`${await benchConnectedKind(repo)}\n`);
}

export const labBenchmark: Benchmark = {
  name: 'lab',
  describe:
    'warm `up` of the default lab (binaries cached), without and with its addons: time per step and memory of all lab processes; ' +
    '`--runtime kind`: the default lab on local and on kind side by side, and a third spoke added and removed on kind (`--kind-only`: kind alone); ' +
    '`--connected` (root): on kind from cold, the official path against the simulated connected world beside the built path',
  options: [
    { flag: '--runtime kind', describe: 'the default lab on local and on kind side by side, and a third spoke added and removed on kind' },
    { flag: '--kind-only', describe: 'with --runtime kind: kind alone' },
    { flag: '--connected', describe: '(root) on kind from cold: the official path against the simulated connected world beside the built path' },
  ],
  async run(args) {
    if (args.includes('--connected')) {
      await connectedColdPaths();
      return;
    }
    const runtime = args[args.indexOf('--runtime') + 1];
    if (args.includes('--runtime') && runtime === 'kind') {
      await withBenchLabHome(() => compareWithKind(args.includes('--kind-only')));
      return;
    }
    await withBenchLabHome(async () => {
      for (const [label, addons] of [
        ['control planes + OCM, no addons', []],
        ['the default lab (cluster-proxy, managed-serviceaccount, cluster-gateway)', [...DEFAULT_ADDONS]],
      ] as const) {
        const rows = await measureLab({ ...defaultLabConfig(), name: 'bench', addons: [...addons] });
        process.stdout.write(`\n-- ${label}\n`);
        const width = Math.max(...rows.map((r) => r[0]!.length));
        for (const [k, v] of rows) process.stdout.write(`${k!.padEnd(width)}  ${v}\n`);
      }
    });
  },
};
