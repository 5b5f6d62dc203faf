import fs from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_ADDONS, defaultLabConfig, type LabConfig } from '../config/index.js';
import { downLab, upLab } from '../lab/lifecycle.js';
import { labDir } from '../paths.js';
import { withBenchLabHome } from './home.js';
import type { Benchmark } from './registry.js';

/** Resident memory (kB) of every process recorded by a lab's pid files, and of their children. */
async function labRssKb(labDirectory: string): Promise<number> {
  const pids = new Set<number>();
  const clusters = await fs.readdir(path.join(labDirectory, 'clusters')).catch(() => [] as string[]);
  for (const c of clusters) {
    const runDir = path.join(labDirectory, 'clusters', c, 'run');
    for (const f of await fs.readdir(runDir).catch(() => [] as string[])) {
      const pid = Number.parseInt(await fs.readFile(path.join(runDir, f), 'utf8').catch(() => ''), 10);
      if (pid > 0) pids.add(pid);
    }
  }
  // Include descendants (workloads the nodelet runs).
  const all = await fs.readdir('/proc').catch(() => [] as string[]);
  const parents = new Map<number, number>();
  for (const p of all) {
    if (!/^\d+$/.test(p)) continue;
    const stat = await fs.readFile(`/proc/${p}/stat`, 'utf8').catch(() => '');
    const ppid = Number.parseInt(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] ?? '', 10);
    if (ppid > 0) parents.set(Number(p), ppid);
  }
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, ppid] of parents) {
      if (pids.has(ppid) && !pids.has(pid)) {
        pids.add(pid);
        grew = true;
      }
    }
  }
  let total = 0;
  for (const pid of pids) {
    const status = await fs.readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const m = /VmRSS:\s+(\d+) kB/.exec(status);
    if (m) total += Number(m[1]);
  }
  return total;
}

/** One lab brought up, measured and removed; its table rows. */
async function measureLab(config: LabConfig): Promise<string[][]> {
  let peakKb = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peakKb = Math.max(peakKb, await labRssKb(labDir(config.name)));
      await new Promise((r) => setTimeout(r, 250));
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
    await new Promise((r) => setTimeout(r, 15_000));
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

export const labBenchmark: Benchmark = {
  name: 'lab',
  describe: 'warm `up` of the default lab (binaries cached), without and with its addons: time per step and memory of all lab processes',
  async run() {
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
