import { execa } from 'execa';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DigestMismatchError, ExitCode, exitCodeOf } from '../../src/errors.js';
import { readImageConfig } from '../../src/provision/oci/config.js';
import { copyImage } from '../../src/provision/oci/copy.js';
import { hostPlatform } from '../../src/provision/oci/platform.js';
import { pushImage, pushIndex, startRegistry, type TestRegistry } from '../support/registry.js';
import { useTempDir } from '../support/temp-dir.js';

/**
 * copyImage and readImageConfig between two real registries (Debian's docker-registry) on loopback: the source
 * with token auth as quay.io does it, the target unauthenticated as the kind labs' registry is.
 */
const tmp = useTempDir('ocm-lab-oci-copy-');
let source: TestRegistry;
let target: TestRegistry;
let scratch: string;
const me = hostPlatform();
const other = me.architecture === 'arm64' ? { os: 'linux', architecture: 'amd64' } : { os: 'linux', architecture: 'arm64', variant: 'v8' };

async function manifestDigest(registry: TestRegistry, repository: string, tag: string): Promise<string | null> {
  const res = await fetch(`${registry.base}/v2/${repository}/manifests/${tag}`, {
    method: 'HEAD',
    headers: { accept: 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json' },
  });
  return res.ok ? res.headers.get('docker-content-digest') : null;
}

beforeAll(async () => {
  const found = await execa('docker-registry', ['--version'], { reject: false });
  if (found.exitCode !== 0) throw new Error('docker-registry is not installed: apt-get install docker-registry (scripts/bootstrap.sh does, as root)');
  scratch = path.join(tmp.path, 'scratch');
  await fs.mkdir(scratch);
  await fs.mkdir(path.join(tmp.path, 'source'));
  await fs.mkdir(path.join(tmp.path, 'target'));
  source = await startRegistry(path.join(tmp.path, 'source'));
  target = await startRegistry(path.join(tmp.path, 'target'), { auth: false });
}, 60_000);

afterAll(async () => {
  await source?.stop();
  await target?.stop();
});

describe('copyImage', () => {
  it('copies this platform of a multi-platform image under the same name, checked, and a second copy uploads nothing', async () => {
    const mine = await pushImage(source, scratch, 'ns/addon', {
      platform: me,
      labels: { 'org.example.arch': me.architecture },
      layers: [
        { gzip: true, files: { 'bin/addon': 'the addon\n' } },
        { gzip: false, files: { 'etc/config': 'a=1\n' } },
      ],
    });
    const theirs = await pushImage(source, scratch, 'ns/addon', { platform: other, layers: [{ gzip: true, files: { 'bin/addon': 'other arch\n' } }] });
    const index = await pushIndex(source, 'ns/addon', 'v1', [theirs.descriptor, mine.descriptor]);
    const opts = {
      reference: `${source.host}/ns/addon:v1`,
      registryBase: source.base,
      expectedDigest: index.digest,
      target: { base: target.base, repository: 'ns/addon', tag: 'v1' },
      scratchDir: scratch,
    };

    const first = await copyImage(opts);
    expect(first).toEqual({ sourceDigest: index.digest, manifestDigest: mine.descriptor.digest, uploaded: 3, stored: true });
    expect(await manifestDigest(target, 'ns/addon', 'v1')).toBe(mine.descriptor.digest);
    for (const layer of mine.layers) expect(await fs.readFile(target.blobFile(layer.digest))).toEqual(await fs.readFile(source.blobFile(layer.digest)));
    expect(await copyImage(opts)).toEqual({ ...first, uploaded: 0, stored: false });
    expect(await fs.readdir(scratch)).not.toContainEqual(expect.stringMatching(/^\.copy-/));

    const config = await readImageConfig({ reference: opts.reference, registryBase: source.base, expectedDigest: index.digest });
    expect(config).toEqual({ digest: index.digest, labels: { 'org.example.arch': me.architecture } });
  });

  it('a pinned digest the source does not have stops with exit 7 before anything reaches the target', async () => {
    const image = await pushImage(source, scratch, 'ns/pinned', { platform: me, layers: [{ gzip: true, files: { tool: 'pinned\n' } }] });
    await pushIndex(source, 'ns/pinned', 'v1', [image.descriptor]);
    const wrong = `sha256:${'0'.repeat(64)}`;
    const err = await copyImage({
      reference: `${source.host}/ns/pinned:v1`,
      registryBase: source.base,
      expectedDigest: wrong,
      target: { base: target.base, repository: 'ns/pinned', tag: 'v1' },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DigestMismatchError);
    expect(exitCodeOf(err)).toBe(ExitCode.integrity);
    expect((err as Error).message).toContain(wrong);
    expect(await manifestDigest(target, 'ns/pinned', 'v1')).toBeNull();
  });

  it('a layer served corrupted stops with exit 7 naming it; the target gets no manifest for the tag', async () => {
    const image = await pushImage(source, scratch, 'ns/corrupt', { platform: me, layers: [{ gzip: true, files: { tool: `unique ${Date.now()}\n` } }] });
    await pushIndex(source, 'ns/corrupt', 'v1', [image.descriptor]);
    const layer = image.layers[0]!;
    const file = source.blobFile(layer.digest);
    const bytes = await fs.readFile(file);
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 0xff;
    await fs.writeFile(file, bytes);
    const err = await copyImage({
      reference: `${source.host}/ns/corrupt:v1`,
      registryBase: source.base,
      target: { base: target.base, repository: 'ns/corrupt', tag: 'v1' },
      scratchDir: scratch,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DigestMismatchError);
    expect((err as Error).message).toContain(layer.digest);
    expect(await manifestDigest(target, 'ns/corrupt', 'v1')).toBeNull();
    expect((await fetch(`${target.base}/v2/ns/corrupt/blobs/${layer.digest}`, { method: 'HEAD' })).status).toBe(404);
  });
});
