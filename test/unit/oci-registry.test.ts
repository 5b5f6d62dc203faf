import { execa } from 'execa';
import fs from 'node:fs/promises';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DigestMismatchError, ExitCode, RegistryUnavailableError, exitCodeOf } from '../../src/errors.js';
import { pullFiles, type PullFilesOptions } from '../../src/provision/oci/pull.js';
import { hostPlatform } from '../../src/provision/oci/platform.js';
import { ensureBinaries } from '../../src/provision/resolve.js';
import { pushImage, pushIndex, sha256Digest, startRegistry, type TestRegistry } from '../support/registry.js';
import { useTempDir } from '../support/temp-dir.js';

/**
 * pullFiles against a real registry (Debian's docker-registry, scripts/bootstrap.sh installs it) on
 * loopback, with token auth as public registries do it; content is pushed through the registry API.
 */
const tmp = useTempDir('ocm-lab-oci-registry-');
let registry: TestRegistry;
let scratch: string;
const me = hostPlatform();
const other = me.architecture === 'arm64' ? { os: 'linux', architecture: 'amd64' } : { os: 'linux', architecture: 'arm64', variant: 'v8' };
let indexDigest: string;

beforeAll(async () => {
  const found = await execa('docker-registry', ['--version'], { reject: false });
  if (found.exitCode !== 0) throw new Error('docker-registry is not installed: apt-get install docker-registry (scripts/bootstrap.sh does, as root)');
  scratch = path.join(tmp.path, 'scratch');
  await fs.mkdir(scratch);
  registry = await startRegistry(tmp.path);
  // Two layers per platform: the bottom one (gzip) has an old bin/tool and etc/gone; the top one (plain tar)
  // replaces bin/tool and whites out etc/gone. An attestation-like entry is for no platform.
  const image = (arch: string) =>
    pushImage(registry, scratch, 'lab/tools', {
      platform: arch === me.architecture ? me : other,
      layers: [
        { gzip: true, files: { 'bin/tool': 'old tool\n', 'etc/gone': 'deleted above\n', 'etc/arch': `${arch}\n` } },
        { gzip: false, files: { 'bin/tool': `new tool for ${arch}\n`, 'etc/.wh.gone': '' } },
      ],
    });
  const mine = await image(me.architecture);
  const theirs = await image(other.architecture);
  const attestation = await pushImage(registry, scratch, 'lab/tools', { platform: { os: 'unknown', architecture: 'unknown' }, layers: [] });
  indexDigest = (await pushIndex(registry, 'lab/tools', 'v1', [theirs.descriptor, attestation.descriptor, mine.descriptor])).digest;
}, 60_000);

afterAll(async () => {
  await registry?.stop();
});

const pull = (o: Partial<PullFilesOptions> & Pick<PullFilesOptions, 'files'>) =>
  pullFiles({ reference: `${registry.host}/lab/tools:v1`, registryBase: registry.base, ...o });

async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('it did not fail');
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

describe('pulling files out of images from a real registry', () => {
  it("takes this platform's files from the top layer down, answering the registry's token challenge, with the token in no message", async () => {
    const out = path.join(tmp.path, 'out1');
    const progress: string[] = [];
    const result = await pull({
      files: [
        { pathInImage: '/bin/tool', dest: path.join(out, 'tool') },
        { pathInImage: 'etc/arch', dest: path.join(out, 'arch') },
      ],
      onProgress: (l) => progress.push(l),
    });
    expect(result.digest).toBe(indexDigest);
    expect(await fs.readFile(path.join(out, 'tool'), 'utf8')).toBe(`new tool for ${me.architecture}\n`);
    expect(await fs.readFile(path.join(out, 'arch'), 'utf8')).toBe(`${me.architecture}\n`);
    expect(await fs.readdir(out)).toEqual(['arch', 'tool']);
    expect(registry.tokenRequests.at(-1)).toEqual({ service: 'ocm-lab-test-registry', scope: 'repository:lab/tools:pull' });
    const token = registry.issuedTokens.at(-1) as string;
    expect(progress.join('\n')).not.toContain(token.slice(-20));
  });

  it('pulls by digest, and with the required digest matching', async () => {
    const out = path.join(tmp.path, 'out2');
    await pull({ reference: `${registry.host}/lab/tools@${indexDigest}`, files: [{ pathInImage: 'bin/tool', dest: path.join(out, 'a') }] });
    await pull({ expectedDigest: indexDigest, files: [{ pathInImage: 'bin/tool', dest: path.join(out, 'b') }] });
    expect(await fs.readFile(path.join(out, 'b'), 'utf8')).toBe(`new tool for ${me.architecture}\n`);
  });

  it('reads a Docker manifest list of Docker v2 manifests with gzip layers', async () => {
    const image = await pushImage(registry, scratch, 'lab/docker-made', {
      platform: me,
      docker: true,
      layers: [{ gzip: true, files: { 'usr/bin/x': 'from docker\n' } }],
    });
    await pushIndex(registry, 'lab/docker-made', 'v2', [image.descriptor], true);
    const dest = path.join(tmp.path, 'out3', 'x');
    await pullFiles({ reference: `${registry.host}/lab/docker-made:v2`, registryBase: registry.base, files: [{ pathInImage: '/usr/bin/x', dest }] });
    expect(await fs.readFile(dest, 'utf8')).toBe('from docker\n');
  });

  it('follows a blob redirect to another server (a CDN) without sending it the token', async () => {
    // In front of the registry: manifests pass through; blobs are redirected to a "CDN" that serves the registry's stored bytes.
    const cdnRequests: { url: string; authorization: string | undefined }[] = [];
    const front = http.createServer((req, res) => {
      const url = req.url ?? '/';
      const cdn = /^\/cdn\/(sha256:[0-9a-f]{64})$/.exec(url);
      if (cdn) {
        cdnRequests.push({ url, authorization: req.headers.authorization });
        void fs.readFile(registry.blobFile(cdn[1] as string)).then((b) => res.writeHead(200).end(b));
        return;
      }
      const blob = /\/blobs\/(sha256:[0-9a-f]{64})$/.exec(url);
      if (blob && req.headers.authorization) {
        res.writeHead(307, { location: `/cdn/${blob[1]}` }).end();
        return;
      }
      const headers = { accept: req.headers.accept ?? '*/*', authorization: req.headers.authorization ?? '' };
      void fetch(`${registry.base}${url}`, { headers }).then(async (r) => {
        res.writeHead(r.status, Object.fromEntries(r.headers)).end(Buffer.from(await r.arrayBuffer()));
      });
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    try {
      const dest = path.join(tmp.path, 'out-cdn', 'tool');
      await pull({ registryBase: `http://127.0.0.1:${(front.address() as AddressInfo).port}`, files: [{ pathInImage: 'bin/tool', dest }] });
      expect(await fs.readFile(dest, 'utf8')).toBe(`new tool for ${me.architecture}\n`);
      expect(cdnRequests.length).toBeGreaterThan(0);
      expect(cdnRequests.map((r) => r.authorization)).toEqual(cdnRequests.map(() => undefined));
    } finally {
      await new Promise((r) => front.close(r));
    }
  });

  it('a file whited out above is not in the image: nothing is written, not even the files that were found', async () => {
    const out = path.join(tmp.path, 'out4');
    const err = await failure(
      pull({
        files: [
          { pathInImage: 'bin/tool', dest: path.join(out, 'tool') },
          { pathInImage: 'etc/gone', dest: path.join(out, 'gone') },
        ],
      }),
    );
    expect(err).toBeInstanceOf(RegistryUnavailableError);
    expect(err.message).toBe(`registry ${registry.host} did not serve the image: ${registry.host}/lab/tools:v1 holds no /etc/gone`);
    expect(await fs.readdir(out)).toEqual([]);
  });

  it('a required digest that does not match stops with exit 7 naming both digests, and writes nothing', async () => {
    const out = path.join(tmp.path, 'out5');
    const wrong = `sha256:${'0'.repeat(64)}`;
    const err = await failure(pull({ expectedDigest: wrong, files: [{ pathInImage: 'bin/tool', dest: path.join(out, 'tool') }] }));
    expect(err).toBeInstanceOf(DigestMismatchError);
    expect(exitCodeOf(err)).toBe(ExitCode.integrity);
    expect(err.message).toBe(`${registry.host}/lab/tools:v1: digest mismatch: expected ${wrong}, got ${indexDigest}; nothing was cached`);
    expect(await exists(out)).toBe(false);
  });

  it('a blob the registry serves corrupted stops with exit 7 naming the layer, both digests, and writes nothing', async () => {
    const image = await pushImage(registry, scratch, 'lab/corrupt', { platform: me, layers: [{ gzip: true, files: { tool: `unique ${Date.now()}\n` } }] });
    const tag = await pushIndex(registry, 'lab/corrupt', 'v1', [image.descriptor]);
    const layer = image.layers[0] as { digest: string };
    const file = registry.blobFile(layer.digest);
    const bytes = await fs.readFile(file);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 1) ^ 0xff, bytes.length - 1);
    await fs.writeFile(file, bytes);
    const out = path.join(tmp.path, 'out6');
    const err = await failure(
      pullFiles({ reference: `${registry.host}/lab/corrupt:v1`, registryBase: registry.base, files: [{ pathInImage: 'tool', dest: path.join(out, 'tool') }] }),
    );
    expect(err).toBeInstanceOf(DigestMismatchError);
    expect(exitCodeOf(err)).toBe(ExitCode.integrity);
    expect(err.message).toBe(
      `${registry.host}/lab/corrupt:v1 layer ${layer.digest}: digest mismatch: expected ${layer.digest}, got ${sha256Digest(bytes)}; nothing was cached`,
    );
    expect(tag.digest).toMatch(/^sha256:/);
    expect(await fs.readdir(out)).toEqual([]);
  });

  it('an unknown tag is a 404 naming the registry host and what to do', async () => {
    const err = await failure(pull({ reference: `${registry.host}/lab/tools:v9`, files: [{ pathInImage: 'bin/tool', dest: path.join(tmp.path, 'o7', 'x') }] }));
    expect(err).toBeInstanceOf(RegistryUnavailableError);
    expect(exitCodeOf(err)).toBe(ExitCode.missingPrerequisite);
    expect(err.message).toBe(`registry ${registry.host} did not serve the image: HTTP 404 for ${registry.base}/v2/lab/tools/manifests/v9`);
    expect((err as RegistryUnavailableError).hint).toMatch(/--artifacts build.*mirrors file/);
  });

  it('a registry that takes no calls or never answers is named with why', async () => {
    const sockets: net.Socket[] = [];
    const hung = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
    const hungHost = `127.0.0.1:${(hung.address() as AddressInfo).port}`;
    try {
      const err = await failure(
        pullFiles({
          reference: `${hungHost}/lab/tools:v1`,
          registryBase: `http://${hungHost}`,
          timeoutMs: 300,
          files: [{ pathInImage: 'x', dest: path.join(tmp.path, 'o8') }],
        }),
      );
      expect(err.message).toBe(`registry ${hungHost} did not serve the image: ${hungHost}: no answer within 0.3 s`);
      expect((err as RegistryUnavailableError).unreachable).toBe(true);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => hung.close(r));
    }
  });

  it('takes OCM binaries out of their images through the recipe, from a mirror of quay.io, and builds nothing', async () => {
    const script = '#!/bin/sh\necho "registration version v1.2.1"\n';
    const image = await pushImage(registry, scratch, 'open-cluster-management/registration', {
      platform: me,
      layers: [{ gzip: true, files: { registration: script } }],
    });
    const tagged = await pushIndex(registry, 'open-cluster-management/registration', 'v1.2.1', [image.descriptor]);
    const cacheDir = path.join(tmp.path, 'cache');
    const progress: string[] = [];
    const built: string[] = [];
    const ref = 'quay.io/open-cluster-management/registration:v1.2.1';
    const mirrors = (digest: string) => ({ registries: { 'quay.io': registry.base }, downloads: {}, digests: { [ref]: digest } });
    const wrong = `sha256:${'1'.repeat(64)}`;
    const builder = async (req: { names: string[]; outDir: string }) => {
      built.push(...req.names);
      await fs.writeFile(path.join(req.outDir, 'registration'), script, { mode: 0o755 });
    };
    // A required digest that does not match stops with exit 7 under auto and official alike, building nothing.
    for (const artifacts of ['auto', 'official'] as const) {
      const err = await failure(
        ensureBinaries(['registration'], {
          cacheDir: path.join(tmp.path, `cache-${artifacts}`),
          artifacts,
          mirrors: mirrors(wrong),
          builder,
          onProgress: (l) => progress.push(l),
        }),
      );
      expect(exitCodeOf(err), artifacts).toBe(ExitCode.integrity);
      expect((err as Error).message).toContain(`digest mismatch: expected ${wrong}, got ${tagged.digest}`);
      expect(await fs.readdir(path.join(tmp.path, `cache-${artifacts}`, 'bin', 'ocm-v1.2.1')).catch(() => [])).toEqual([]);
    }
    expect(built).toEqual([]);
    const err = await failure(
      ensureBinaries(['registration'], { cacheDir: path.join(tmp.path, 'cache-official'), artifacts: 'official', mirrors: mirrors(wrong), builder }),
    );
    expect(exitCodeOf(err)).toBe(ExitCode.integrity);
    expect(await fs.readdir(path.join(tmp.path, 'cache-official', 'bin', 'ocm-v1.2.1')).catch(() => [])).toEqual([]);

    const found = await ensureBinaries(['registration'], {
      cacheDir,
      artifacts: 'official',
      mirrors: mirrors(tagged.digest),
      builder: () => Promise.reject(new Error('nothing may be built')),
    });
    expect(found.registration).toBe(path.join(cacheDir, 'bin', 'ocm-v1.2.1', 'registration'));
    expect((await execa(found.registration, ['--version'])).stdout).toBe('registration version v1.2.1');
    const manifest = JSON.parse(await fs.readFile(path.join(cacheDir, 'bin', 'ocm-v1.2.1', 'manifest.json'), 'utf8'));
    expect(manifest.source).toBe('download');
  });

  it('a stopped registry refuses the connection: the host is named and not asked again', async () => {
    await registry.stop();
    const err = await failure(pull({ files: [{ pathInImage: 'bin/tool', dest: path.join(tmp.path, 'o9', 'x') }] }));
    expect(err).toBeInstanceOf(RegistryUnavailableError);
    expect(err.message).toBe(`registry ${registry.host} did not serve the image: ${registry.host}: ECONNREFUSED`);
    expect((err as RegistryUnavailableError).unreachable).toBe(true);
  });
});
