import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MissingPrerequisiteError } from '../../src/errors.js';
import { resolveImageOptions } from '../../src/images/options.js';
import { BASE_ROOTFS, ensureRootfsTar } from '../../src/images/rootfs.js';
import { useTempDir } from '../support/temp-dir.js';

describe('the Debian root filesystem with no debootstrap on PATH', () => {
  const dir = useTempDir('rootfs-prereq-');
  const savedPath = process.env.PATH;
  afterEach(() => {
    process.env.PATH = savedPath;
  });

  it('names debootstrap and how to install it (exit code of a missing prerequisite), and makes nothing in the cache', async () => {
    const emptyBin = path.join(dir.path, 'bin');
    const cache = path.join(dir.path, 'cache');
    await fs.mkdir(emptyBin);
    process.env.PATH = emptyBin;
    const err = await ensureRootfsTar(BASE_ROOTFS, resolveImageOptions({ cacheDir: cache })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MissingPrerequisiteError);
    expect((err as Error).message).toMatch(/^debootstrap is not on PATH: the base image's Debian bookworm root filesystem/);
    expect((err as MissingPrerequisiteError).hint).toMatch(/apt-get install debootstrap/);
    expect(await fs.readdir(cache).catch(() => [])).toEqual([]);
  });
});
