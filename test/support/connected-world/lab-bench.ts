import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cacheDir } from '../../../src/paths.js';
import { startConnectedWorld } from './index.js';
import { emptyEngine, KIND_USER_UID, kindDownloads, kindUser, linkBuiltCache, startKindWorld, type KindUser } from './kind.js';
import type { WorldAddresses } from './names.js';
import { raiseKindSysctls } from '../kind-sysctls.js';

/** Apart from the tests' worlds (127.0.77.x, 127.0.78.x; their engines' networks), so the bench may run beside them. */
const ADDRESSES: WorldAddresses = { registry: '127.0.79.1', files: '127.0.79.2' };
const ENGINE_NETWORK = { bridge: 'ocmlabbn0', bip: '10.239.0.1/24', pool: '10.238.0.0/16' };
const LAB_NAME = 'benchconn';

interface UpResult {
  durationMs: number;
  steps: { title: string; durationMs: number; result: string }[];
  artifacts?: { line?: string };
}

interface Measured {
  /** Wall time of the `ocm-lab up` process: the runtime's and the artifacts' choice included. */
  wallMs: number;
  up: UpResult;
}

/** `ocm-lab up -o json` as the user, timed; the lab then goes down again and the engine is emptied. */
async function coldUp(user: KindUser, cli: string, labFile: string, extra: string[], cache: string, empty: () => Promise<void>): Promise<Measured> {
  const node = path.join(user.dirs.bin, 'node');
  try {
    const started = Date.now();
    const r = await user.run(node, [cli, 'up', '--config', labFile, '-o', 'json', ...extra], { cache });
    const wallMs = Date.now() - started;
    if (r.exitCode !== 0) throw new Error(`ocm-lab up ${extra.join(' ')} exited ${r.exitCode}:\n${r.all.slice(-4000)}`);
    return { wallMs, up: JSON.parse(r.stdout) as UpResult };
  } finally {
    const down = await user.run(node, [cli, 'down', '--config', labFile], { cache });
    await empty();
    if (down.exitCode !== 0) throw new Error(`ocm-lab down exited ${down.exitCode}:\n${down.all.slice(-4000)}`);
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ')).join('\n');
}

/**
 * The default lab on kind from cold, twice in one engine of the simulated connected world (as a user in the docker
 * group, no Go on PATH), with the engine emptied before each:
 *  - connected: an empty ocm-lab cache, everything official from the loopback fixture (kind's release binary, kindest/node
 *    by digest, OCM's images copied registry to registry, the Node.js base pulled, ocm-lab:<version> built on it);
 *  - built: `--artifacts build` with a cache holding what was built here before (binaries, the built images' tarballs,
 *    the rendered operators), so the images are `docker load`ed, not rebuilt (a rebuild from nothing is 25-65 min).
 * Both end when `up` returns, i.e. every addon is Available. Returns the report. Needs root and the shared cache filled.
 */
export async function benchConnectedKind(repo: string): Promise<string> {
  const cli = path.join(repo, 'dist', 'cli', 'main.js');
  const restoreSysctls = await raiseKindSysctls();
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-bench-connected-'));
  let download: { url: string; sha256: string } | undefined;
  const world = await startConnectedWorld({ addresses: ADDRESSES, routes: async (routes, dir) => void (download = await kindDownloads(routes, dir)) });
  try {
    const kind = await startKindWorld(world, { kindDownload: download as { url: string; sha256: string }, network: ENGINE_NETWORK });
    try {
      const user = await kindUser(world, kind, scratch);
      const labFile = path.join(user.dirs.home, 'lab.yaml');
      const lab = (await fs.readFile(path.join(repo, 'examples', 'default-lab.yaml'), 'utf8'))
        .replace(/^name: default$/m, `name: ${LAB_NAME}`)
        .replace(/^kubernetesVersion: .*$/m, 'kubernetesVersion: v1.37');
      await fs.writeFile(labFile, lab, { mode: 0o644 });
      const empty = () => emptyEngine(kind);

      const connected = await coldUp(user, cli, labFile, [], user.dirs.cache, empty);
      const builtCache = path.join(scratch, 'cache-built');
      await linkBuiltCache(cacheDir(), builtCache, { uid: KIND_USER_UID, gid: kind.socketGid });
      const built = await coldUp(user, cli, labFile, ['--artifacts', 'build'], builtCache, empty);

      const ratio = (a: number, b: number) => `×${(a / b).toFixed(2)}`;
      const rows = [
        ['', 'connected (official)', 'built (images from tarballs)', 'connected / built'],
        ['up, wall time of the command', seconds(connected.wallMs), seconds(built.wallMs), ratio(connected.wallMs, built.wallMs)],
        ['up, as it reports', seconds(connected.up.durationMs), seconds(built.up.durationMs), ratio(connected.up.durationMs, built.up.durationMs)],
      ];
      const stepTitles = [...new Set([...connected.up.steps, ...built.up.steps].map((s) => s.title))];
      const step = (m: Measured, title: string) => {
        const s = m.up.steps.find((x) => x.title === title);
        return s ? seconds(s.durationMs) : '-';
      };
      const steps = [['step', 'connected', 'built'], ...stepTitles.map((t) => [`  ${t}`, step(connected, t), step(built, t)])];
      return [
        table(rows),
        '',
        `connected: ${connected.up.artifacts?.line ?? '?'}; empty ocm-lab cache, empty engine, no Go, a docker-group user`,
        `built:     ${built.up.artifacts?.line ?? '?'}; the ocm-lab cache holds the built binaries and images (tarballs, docker load), empty engine`,
        '',
        table(steps),
      ].join('\n');
    } finally {
      await kind.stop();
    }
  } finally {
    await world.close();
    await restoreSysctls();
    await fs.rm(scratch, { recursive: true, force: true });
  }
}
