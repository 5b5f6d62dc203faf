import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { TestProject } from 'vitest/node';

/**
 * globalSetup of the projects whose files share labs: one directory for the run's shared labs (a lab home
 * per shape, made by the shape's first user), and at the end of the run every shared lab still there
 * brought down and its home removed, whether the run passed or not. The shared-labs-down test file downs
 * them first and checks that nothing is left; this is the safety net for a run that stopped before it.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-shared-'));
  project.provide('sharedLabRoot', root);
  return async () => {
    for (const shape of await fs.readdir(root).catch(() => [] as string[])) {
      const home = path.join(root, shape);
      await stopRotationLoop(home);
      const labFile = path.join(home, 'lab.yaml');
      if (
        await fs.stat(labFile).then(
          () => true,
          () => false,
        )
      ) {
        const r = await execa(process.execPath, [path.resolve('dist/cli/main.js'), 'down'], {
          reject: false,
          env: { ...process.env, CI: 'true', OCM_LAB_HOME: home, OCM_LAB_CONFIG: labFile },
        });
        if (r.exitCode !== 0) process.stderr.write(`shared lab ${shape}: down exited ${r.exitCode}: ${r.stderr}\n`);
      }
    }
    await fs.rm(root, { recursive: true, force: true });
  };
}

async function stopRotationLoop(home: string): Promise<void> {
  const pid = Number(await fs.readFile(path.join(home, 'rotation', 'pid'), 'utf8').catch(() => ''));
  if (pid > 0) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // Already gone: it stops by itself once its time is up.
    }
  }
}
