import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kindProvisionable } from '../../src/runtime/kind/kind-cli.js';
import { kindRelease } from '../../src/provision/recipes.js';

// `--runtime auto` asks this: a user with Docker and Node.js only (no kind, no Go, an empty cache) must still get kind.
describe('kindProvisionable', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-kind-provisionable-'));
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });
  /** No kind and no Go anywhere: an empty PATH and an empty cache. */
  const bare = (extra: NodeJS.ProcessEnv = {}) => ({ PATH: path.join(dir, 'bin'), OCM_LAB_CACHE_DIR: path.join(dir, 'cache'), ...extra });

  it.runIf(kindRelease() !== undefined)("with no kind and no Go, kind's release download for this platform makes it provisionable", async () => {
    const r = await kindProvisionable(bare());
    expect(r).toEqual({ ok: true, how: expect.stringMatching(/^kind v\S+ can be downloaded \(kind-linux-(amd64|arm64) of its release\)$/) });
  });

  it('under build (OCM_LAB_ARTIFACTS=build or OCM_LAB_NO_DOWNLOAD=1) the download does not count: no kind, no Go, not provisionable', async () => {
    for (const env of [{ OCM_LAB_ARTIFACTS: 'build' }, { OCM_LAB_NO_DOWNLOAD: '1' }]) {
      const r = await kindProvisionable(bare(env));
      expect(r.ok, JSON.stringify(env)).toBe(false);
      expect(r.how).toMatch(/no kind CLI .* and no Go toolchain/);
    }
  });
});
