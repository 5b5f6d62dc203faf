import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, inject } from 'vitest';
import { renderLabConfig, type LabConfig } from '../../src/config/index.js';
import { upLab, type UpResult } from '../../src/lab/lifecycle.js';
import { labKubeconfigFile } from '../../src/paths.js';
import { labSnapshot, snapshotDifference, type LabSnapshot } from './lab-snapshot.js';
import { blameTests, type TestDifference } from './shared-lab-blame.js';
import { SHARED_SHAPES, type SharedShape, type SharedShapeDefinition } from './shared-shapes.js';

/** A lab a test file uses: its home, its lab file (the CLI's --config) and the environment the CLI needs to find it. */
export interface TestLab {
  home: string;
  config: LabConfig;
  labFile: string;
  kubeconfig: string;
  /** OCM_LAB_HOME and OCM_LAB_CONFIG, for `cli()`. */
  env: NodeJS.ProcessEnv;
  /** What `up` returned; only for the file that brought the lab up. */
  up?: UpResult;
}

/** `config` written to `<home>/lab.yaml` (its source, for the CLI's --config) and brought up, with OCM_LAB_HOME already `home`. */
export async function upLabIn(home: string, config: LabConfig): Promise<TestLab & { up: UpResult }> {
  const labFile = path.join(home, 'lab.yaml');
  const withSource: LabConfig = { ...config, source: labFile };
  await fs.writeFile(labFile, renderLabConfig(withSource));
  const up = await upLab(withSource, { renderer: 'silent' });
  return { home, config: withSource, labFile, kubeconfig: up.status.kubeconfig ?? '', env: { OCM_LAB_HOME: home, OCM_LAB_CONFIG: labFile }, up };
}

/** Where the run keeps its shared labs (test/support/shared-labs-setup.ts). */
function sharedLabRoot(): string {
  const root = inject('sharedLabRoot');
  if (!root) throw new Error('no shared lab root: the project needs globalSetup test/support/shared-labs-setup.ts');
  return root;
}

function sharedLabHome(shape: SharedShape): string {
  return path.join(sharedLabRoot(), shape);
}

const BASELINE = 'baseline.json';
/** How long a file's clean-up may take to show on the clusters. */
const SETTLE_MS = 120_000;
/** One line per file that used the lab, in order: who to blame when a later file finds it changed. */
const USERS = 'users.log';

async function readBaseline(home: string): Promise<LabSnapshot | undefined> {
  return fs.readFile(path.join(home, BASELINE), 'utf8').then(
    (text) => JSON.parse(text) as LabSnapshot,
    () => undefined,
  );
}

/**
 * The lab of `shape` for the calling file, called in its describe block before its own hooks: brought up once per
 * run by its first user, torn down at the end of the run (test/support/shared-labs-setup.ts). The returned object
 * is filled in by a beforeAll hook that runs before the file's own. The lab's objects are compared with the
 * snapshot taken when it came up: after each test (kept, to name the test a leftover came with), after the file's
 * own afterAll hooks (the file left objects behind or took some away: it fails, naming the objects and the test after
 * which each appeared), and when the file starts (an earlier run of a file left it changed: said
 * with the file's name, and the snapshot taken again so only this file's own changes count against it). `last`:
 * the file that takes the lab down (test/e2e/shared-labs-down.test.ts), not compared at its end.
 */
export function useSharedLab(shape: SharedShape, file: string, options: { last?: boolean } = {}): TestLab {
  const definition: SharedShapeDefinition = SHARED_SHAPES[shape];
  const lab = {} as TestLab;
  let baseline: LabSnapshot | undefined;
  const history: TestDifference[] = [];
  beforeAll(async () => {
    const home = sharedLabHome(shape);
    await fs.mkdir(home, { recursive: true, mode: 0o700 });
    process.env.OCM_LAB_HOME = home;
    baseline = await readBaseline(home);
    if (!baseline) {
      Object.assign(lab, await upLabIn(home, definition.config()));
      await definition.afterUp?.(lab);
      baseline = await labSnapshot(lab.kubeconfig, definition.contexts);
      await fs.writeFile(path.join(home, BASELINE), JSON.stringify(baseline, null, 1));
    } else {
      const labFile = path.join(home, 'lab.yaml');
      const config: LabConfig = { ...definition.config(), source: labFile };
      Object.assign(lab, { home, config, labFile, kubeconfig: labKubeconfigFile(config.name), env: { OCM_LAB_HOME: home, OCM_LAB_CONFIG: labFile } });
      const now = await labSnapshot(lab.kubeconfig, definition.contexts);
      const changed = snapshotDifference(baseline, now);
      if (changed.length) {
        const users = (await fs.readFile(path.join(home, USERS), 'utf8').catch(() => '')).trim().split('\n').filter(Boolean);
        process.stderr.write(
          `shared lab '${shape}' is not as it came up when ${file} starts; the file before: ${users.at(-1) ?? 'none'}. ${changed.join('; ')}\n`,
        );
        baseline = now;
      }
    }
    await fs.appendFile(path.join(home, USERS), `${file}\n`);
  }, 900_000);
  // The last user takes the lab down: nothing to compare after it.
  if (options.last) return lab;
  // Registered before the file's own hooks, so it runs after them (vitest runs after-hooks in reverse).
  afterEach(async (context) => {
    if (!baseline || !lab.kubeconfig) return;
    // Only to name a test at the file's end: a snapshot that fails here (an API answering late) fails no test.
    const now = await labSnapshot(lab.kubeconfig, definition.contexts).catch(() => undefined);
    if (now) history.push({ test: context.task.name, difference: snapshotDifference(baseline, now) });
  }, 120_000);
  afterAll(async () => {
    if (!baseline || !lab.kubeconfig) return;
    // What a file takes away goes asynchronously (ManifestWorks, finalizers): a while to settle before it counts.
    let changed: string[] = [];
    const until = Date.now() + SETTLE_MS;
    do {
      changed = snapshotDifference(baseline, await labSnapshot(lab.kubeconfig, definition.contexts));
      if (!changed.length) return;
      await new Promise((r) => setTimeout(r, 2_000));
    } while (Date.now() < until);
    const blamed = blameTests(history, changed).join('; ');
    await fs.appendFile(path.join(sharedLabHome(shape), USERS), `${file} left it changed: ${blamed}\n`);
    throw new Error(`${file} left the shared lab '${shape}' changed (each file must take away what it adds): ${blamed}`);
  }, SETTLE_MS + 120_000);
  return lab;
}

declare module 'vitest' {
  export interface ProvidedContext {
    sharedLabRoot: string;
  }
}
