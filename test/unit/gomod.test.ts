import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DigestMismatchError, ExitCode, MissingPrerequisiteError } from '../../src/errors.js';
import { hash1 } from '../../src/provision/gomod/dirhash.js';
import { escapeModulePath, fetchModuleSource, goProxyBase, moduleSourceDir, moduleZipUrl } from '../../src/provision/gomod/proxy.js';
import { ZipFormatError, zipEntries, zipEntryData } from '../../src/provision/gomod/zip.js';
import { downloadUrl, parseMirrors } from '../../src/provision/mirrors.js';
import { cachedModuleZip, GOMODCACHE, startModuleProxy, storedZip } from '../support/module-proxy.js';
import { useTempDir } from '../support/temp-dir.js';

const OCM = 'open-cluster-management.io/ocm';
const real = cachedModuleZip(OCM, 'v1.2.1');
const realApi = cachedModuleZip('open-cluster-management.io/api', 'v1.2.0');
const whyNoZip = `needs ${OCM}@v1.2.1 in ${GOMODCACHE} (go mod download ${OCM}@v1.2.1)`;

function filesOf(zip: Buffer): { name: string; data: Buffer }[] {
  return zipEntries(zip).map((e) => ({ name: e.name, data: zipEntryData(zip, e) }));
}

describe('module zip reader', () => {
  it.skipIf(!real)(`reads every deflated file of a real module zip as go extracted it (${whyNoZip})`, async () => {
    const files = filesOf(real!.zip);
    expect(files.length).toBeGreaterThan(100);
    for (const rel of ['go.mod', 'deploy/cluster-manager/config/kustomization.yaml']) {
      const file = files.find((f) => f.name === `${OCM}@v1.2.1/${rel}`);
      expect(file?.data.equals(await fs.readFile(path.join(GOMODCACHE, `${OCM}@v1.2.1`, rel)))).toBe(true);
    }
  });

  it('reads stored entries, and refuses a truncated or corrupted zip', () => {
    const zip = storedZip([
      { name: 'm@v1/a.txt', data: Buffer.from('alpha\n') },
      { name: 'm@v1/dir/b.txt', data: Buffer.from('') },
    ]);
    expect(filesOf(zip).map((f) => [f.name, f.data.toString()])).toEqual([
      ['m@v1/a.txt', 'alpha\n'],
      ['m@v1/dir/b.txt', ''],
    ]);
    expect(() => zipEntries(zip.subarray(0, zip.length - 5))).toThrow(ZipFormatError);
    const flipped = Buffer.from(zip);
    const at = 30 + 'm@v1/a.txt'.length; // first byte of a.txt's data
    flipped[at] = flipped[at]! ^ 0xff;
    const [entry] = zipEntries(flipped);
    expect(() => zipEntryData(flipped, entry!)).toThrow(/a\.txt: CRC-32 does not match/);
  });
});

describe('h1 hash (go.sum)', () => {
  it.skipIf(!real || !realApi)(`equals the .ziphash go mod download recorded for real module zips (${whyNoZip})`, () => {
    expect(hash1(filesOf(real!.zip))).toBe(real!.ziphash);
    expect(hash1(filesOf(realApi!.zip))).toBe(realApi!.ziphash);
  });

  it('sorts names as bytes and hashes sha256sum-style lines', () => {
    // sha256sum of "x\n" and "y\n" lines, then sha256 of the summary: the same in any input order.
    const a = hash1([
      { name: 'm@v1/b', data: Buffer.from('y\n') },
      { name: 'm@v1/a', data: Buffer.from('x\n') },
    ]);
    const b = hash1([
      { name: 'm@v1/a', data: Buffer.from('x\n') },
      { name: 'm@v1/b', data: Buffer.from('y\n') },
    ]);
    expect(a).toBe(b);
    expect(a).toMatch(/^h1:[A-Za-z0-9+/]{43}=$/);
    expect(() => hash1([{ name: 'a\nb', data: Buffer.alloc(0) }])).toThrow(/newline/);
  });
});

describe('module proxy URLs', () => {
  it('escapes upper-case letters as the module cache does', async () => {
    expect(escapeModulePath('github.com/BurntSushi/toml')).toBe('github.com/!burnt!sushi/toml');
    expect(escapeModulePath('open-cluster-management.io/ocm')).toBe('open-cluster-management.io/ocm');
    expect(() => escapeModulePath('example.com/a!b')).toThrow(/'!'/);
    const dirs = await fs.readdir(path.join(GOMODCACHE, 'cache', 'download', 'github.com')).catch(() => [] as string[]);
    if (dirs.includes('!burnt!sushi')) expect(dirs).not.toContain('BurntSushi');
  });

  it("takes $GOPROXY's first http(s) entry, the default when unset, and refuses off/direct", () => {
    expect(goProxyBase({})).toBe('https://proxy.golang.org');
    expect(goProxyBase({ GOPROXY: 'https://goproxy.example/,direct' })).toBe('https://goproxy.example');
    expect(goProxyBase({ GOPROXY: 'direct|http://127.0.0.1:9/p' })).toBe('http://127.0.0.1:9/p');
    for (const GOPROXY of ['off', 'direct', 'off,https://late.example']) {
      const err = (() => {
        try {
          return goProxyBase({ GOPROXY });
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(MissingPrerequisiteError);
      expect((err as Error).message).toContain(`GOPROXY=${GOPROXY} names no http(s) module proxy`);
    }
  });

  it("builds the zip URL, which a mirrors file's downloads: can rewrite", () => {
    const url = moduleZipUrl('https://proxy.golang.org', 'github.com/Azure/go-ansiterm', 'v0.0.0-20230124172434-306776ec8161');
    expect(url).toBe('https://proxy.golang.org/github.com/!azure/go-ansiterm/@v/v0.0.0-20230124172434-306776ec8161.zip');
    const mirrors = parseMirrors({ downloads: { 'https://proxy.golang.org': 'https://mirror.example/goproxy' } }, 'm.yaml');
    expect(downloadUrl(mirrors, url)).toBe('https://mirror.example/goproxy/github.com/!azure/go-ansiterm/@v/v0.0.0-20230124172434-306776ec8161.zip');
  });
});

describe('fetching a module without Go', () => {
  const tmp = useTempDir('ocm-lab-gomod-', { each: true });
  const zipPath = `/${OCM}/@v/v1.2.1.zip`;
  const served = new Map<string, Buffer>();
  let proxy: Awaited<ReturnType<typeof startModuleProxy>>;
  beforeAll(async () => {
    proxy = await startModuleProxy(served);
  });
  afterAll(() => proxy.close());
  const fetchOcm = (extra: { GOPROXY?: string } = {}) =>
    fetchModuleSource(OCM, 'v1.2.1', { cacheDir: tmp.path, env: { GOPROXY: extra.GOPROXY ?? `${proxy.base},direct` } });
  const cacheContents = () => fs.readdir(path.join(tmp.path, 'go-modules', 'open-cluster-management.io')).catch(() => [] as string[]);

  it.skipIf(!real)(`extracts the verified zip into <cache>/go-modules/<module>@<version>/, once for concurrent callers (${whyNoZip})`, async () => {
    served.set(zipPath, real!.zip);
    const before = proxy.requests.length;
    const [dir, again] = await Promise.all([fetchOcm(), fetchOcm()]);
    expect(dir).toBe(moduleSourceDir(tmp.path, OCM, 'v1.2.1'));
    expect(again).toBe(dir);
    expect(proxy.requests.slice(before)).toEqual([zipPath]);
    const rel = 'deploy/klusterlet/config/kustomization.yaml';
    expect(await fs.readFile(path.join(dir, rel), 'utf8')).toBe(await fs.readFile(path.join(GOMODCACHE, `${OCM}@v1.2.1`, rel), 'utf8'));
    expect(await cacheContents()).toEqual(['ocm@v1.2.1']);
    await fetchOcm();
    expect(proxy.requests.length).toBe(before + 1); // a warm cache asks nobody
  });

  it.skipIf(!real)(`stops with exit 7 on a corrupted zip, naming module, URL and both hashes, caching nothing (${whyNoZip})`, async () => {
    const corrupted = Buffer.from(real!.zip);
    const at = Math.floor(corrupted.length / 3);
    corrupted[at] = corrupted[at]! ^ 0x55;
    served.set(zipPath, corrupted);
    const err = await fetchOcm().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DigestMismatchError);
    expect((err as DigestMismatchError).exitCode).toBe(ExitCode.integrity);
    expect((err as Error).message).toContain(
      `${OCM}@v1.2.1 (${proxy.base}${zipPath}): digest mismatch: expected ${real!.ziphash}, got no hash: not a readable`,
    );
    expect(await cacheContents()).toEqual([]);
  });

  it('names the actual h1 of a readable zip with other contents (exit 7)', async () => {
    const other = [{ name: `${OCM}@v1.2.1/go.mod`, data: Buffer.from('module open-cluster-management.io/ocm\n') }];
    served.set(zipPath, storedZip(other));
    const err = await fetchOcm().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DigestMismatchError);
    expect((err as DigestMismatchError).actual).toBe(hash1(other));
    expect((err as Error).message).toMatch(/expected h1:JC1mrIkaNjJ\+AmLjiQ\/sIhUE6Uzb3JVXFlFbaZF5\+VY=, got h1:/);
    expect(await cacheContents()).toEqual([]);
  });

  it('refuses an entry outside <module>@<version>/ (exit 7)', async () => {
    served.set(zipPath, storedZip([{ name: `${OCM}@v1.2.1/../../escape`, data: Buffer.from('x') }]));
    const err = await fetchOcm().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DigestMismatchError);
    expect((err as Error).message).toContain('is not a file under open-cluster-management.io/ocm@v1.2.1/');
    expect(await cacheContents()).toEqual([]);
  });

  it('says which URL did not serve the module and what to do (exit 3)', async () => {
    served.delete(zipPath);
    const err = await fetchOcm().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MissingPrerequisiteError);
    expect((err as Error).message).toContain(`cannot fetch ${OCM}@v1.2.1 from the Go module proxy: ${proxy.base}${zipPath}: HTTP 404`);
    expect((err as MissingPrerequisiteError).hint).toContain('--artifacts build');
    expect((err as MissingPrerequisiteError).hint).toContain('downloads: in a mirrors file');
    expect(await cacheContents()).toEqual([]);
  });

  it('refuses a module it has no pinned hash for, before asking the network (exit 3)', async () => {
    const before = proxy.requests.length;
    const err = await fetchModuleSource('example.com/unpinned', 'v1.0.0', { cacheDir: tmp.path, env: { GOPROXY: proxy.base } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MissingPrerequisiteError);
    expect((err as Error).message).toContain("cannot fetch example.com/unpinned@v1.0.0 without Go ('go' is not on PATH): ocm-lab pins no go.sum hash");
    expect(proxy.requests.length).toBe(before);
  });
});
