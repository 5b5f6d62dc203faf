import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DevSession, type LoadResult } from '../addons/dev/session.js';
import { writeProject } from '../addons/dev/scaffold.js';
import { removeDevAddon } from '../addons/dev/remove.js';
import { hubClientFor } from '../addons/hub-client.js';
import { defaultLabConfig, loadLabConfig, renderLabConfig, spokeClusters, type LabConfig } from '../config/index.js';
import { downLab, upLab } from '../lab/lifecycle.js';
import { getOrNull, type KubeObject } from '../kube/objects.js';
import { withBenchLabHome } from './home.js';
import type { Benchmark } from './types.js';
import { sleep } from '../kube/wait.js';

const ROUNDS = 8;
const ADDON = 'benchdemo';

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
};
const secs = (ms: number) => (ms / 1000).toFixed(2);

async function measure(config: LabConfig): Promise<void> {
  const parent = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-bench-addon-'));
  const dir = path.join(parent, ADDON);
  const hub = await hubClientFor(config);
  const session = await DevSession.open(config, dir, { progress: () => undefined, timeoutMs: 120_000 });
  const clusters = spokeClusters(config).map((c) => c.name);
  try {
    await writeProject(ADDON, dir);
    const start = Date.now();
    await session.load(start);
    process.stdout.write(`first load (build, manager, agents, Available everywhere): ${secs(Date.now() - start)} s\n`);
    const results: LoadResult[] = [];
    const controller = new AbortController();
    const watching = session.watch(controller.signal, (r) => results.push(r));
    const running: Record<string, number[]> = Object.fromEntries(clusters.map((c) => [c, []]));
    const reported: Record<string, number[]> = Object.fromEntries(clusters.map((c) => [c, []]));
    const reportFile = path.join(dir, 'src', 'report.ts');
    for (let round = 2; round < ROUNDS + 2; round++) {
      const text = await fs.readFile(reportFile, 'utf8');
      const saved = Date.now();
      await fs.writeFile(reportFile, text.replace(/VERSION = 'v\d+'/, `VERSION = 'v${round}'`));
      // Read back what the new agents write to the hub: the version this save put there.
      await Promise.all(
        clusters.map(async (c) => {
          for (;;) {
            const cm = await getOrNull<KubeObject & { data?: Record<string, string> }>(hub, `/api/v1/namespaces/${c}/configmaps/${ADDON}-report`);
            if (cm?.data?.version === `v${round}`) return reported[c]!.push(Date.now() - saved);
            if (Date.now() - saved > 60_000) throw new Error(`round ${round}: ${c} still reports ${cm?.data?.version ?? 'nothing'} 60 s after the save`);
            await sleep(50);
          }
        }),
      );
      while (results.length < round - 1) await sleep(50);
      for (const c of clusters) running[c]!.push(results[round - 2]?.runningMs[c] ?? NaN);
      await sleep(1_000);
    }
    controller.abort();
    await watching;
    process.stdout.write(`save-to-running over ${ROUNDS} saves of src/report.ts (agent change), seconds: median / p90 / max\n`);
    process.stdout.write(`cluster    new agent pod Ready    new agent's report on the hub\n`);
    for (const c of clusters) {
      const r = running[c]!;
      const h = reported[c]!;
      process.stdout.write(
        `${c.padEnd(10)} ${secs(quantile(r, 0.5))} / ${secs(quantile(r, 0.9))} / ${secs(Math.max(...r))}     ` +
          `${secs(quantile(h, 0.5))} / ${secs(quantile(h, 0.9))} / ${secs(Math.max(...h))}\n`,
      );
    }
  } finally {
    session.close();
    await removeDevAddon(hub, ADDON, { timeoutMs: 120_000 }).catch((err: Error) => process.stderr.write(`removing ${ADDON}: ${err.message}\n`));
    hub.close();
    await fs.rm(parent, { recursive: true, force: true });
  }
}

/**
 * `npm run bench -- addon-dev [--config LAB.yaml]`: `addon dev`'s inner loop. A project from
 * `addon new` is loaded, then src/report.ts is saved ROUNDS times with a new version; each time the
 * bench records when the new agent's pod is Ready on every spoke and when that agent's report with
 * the new version reaches the hub. With --config it uses that running lab, else it brings up its own.
 */
export const addonDevBenchmark: Benchmark = {
  name: 'addon-dev',
  describe: 'addon dev: save-to-running time of an agent change on every spoke',
  options: [{ flag: '--config LAB.yaml', describe: 'measure on this running lab instead of bringing one up' }],
  run: async (args) => {
    const at = args.indexOf('--config');
    if (at >= 0 && args[at + 1]) return measure(await loadLabConfig(args[at + 1]));
    return withBenchLabHome(async (home) => {
      const labFile = path.join(home, 'lab.yaml');
      const config = { ...defaultLabConfig(), name: 'bench-addon-dev', addons: [], source: labFile };
      await fs.writeFile(labFile, renderLabConfig(config));
      try {
        await upLab(config, { renderer: 'silent' });
        await measure(config);
      } finally {
        await downLab(config, { renderer: 'silent' });
      }
    });
  },
};
