import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withLabOcmSource } from '../../src/cli/commands/artifacts-options.js';
import { parseLabConfig, renderLabConfig } from '../../src/config/index.js';
import { DigestMismatchError, ExitCode, InvalidInputError, LabError, MissingPrerequisiteError } from '../../src/errors.js';
import { sourceBuildCommand } from '../../src/provision/gobuild.js';
import { ensureBinaries, ensureGoModuleSource, type BuildRequest } from '../../src/provision/index.js';
import { NO_MIRRORS, parseMirrors, sourceArchiveFor, withOcmSource, type Mirrors } from '../../src/provision/mirrors.js';
import { ocmRecipe } from '../../src/provision/recipes.js';
import { ensureSourceTree, sourceArchiveState, sourceTreeDir } from '../../src/provision/source-tree.js';
import { OCM_MODULE, OCM_SOURCE_ARCHIVE_SHA256 } from '../../src/provision/versions.js';
import { VALID_LAB_FILE } from '../support/lab-file.js';
import { addonVocabulary } from '../../src/addons/registry.js';

const PIN = OCM_SOURCE_ARCHIVE_SHA256['v1.3.1']!;
const OTHER = 'b'.repeat(64);
const KEY = `${OCM_MODULE}@v1.3.1`;

function thrown(fn: () => unknown): LabError {
  try {
    fn();
  } catch (err) {
    return err as LabError;
  }
  throw new Error('accepted');
}

describe('OCM source archives: the mirrors file, --ocm-source, $OCM_LAB_OCM_SOURCE, ocmSource:', () => {
  let savedEnv: string | undefined;
  beforeEach(() => {
    savedEnv = process.env.OCM_LAB_OCM_SOURCE;
    delete process.env.OCM_LAB_OCM_SOURCE;
  });
  afterEach(() => {
    if (savedEnv === undefined) delete process.env.OCM_LAB_OCM_SOURCE;
    else process.env.OCM_LAB_OCM_SOURCE = savedEnv;
  });

  it("pins v1.3.1's archive (tag v1.3.1 as git archive makes it, with vendor/) and no other", () => {
    expect(OCM_SOURCE_ARCHIVE_SHA256).toEqual({ 'v1.3.1': '0a2cd29d000ef182f927bb94a170b82bb6572acd4e1b9d47c219f29cabb86c42' });
  });

  it('reads sources: relative to the mirrors file, taking the pin where the entry gives no sha256, and its own where it does', () => {
    const m = parseMirrors(
      {
        sources: {
          [KEY]: { file: 'src/ocm-v1.3.1-src.tar.gz' },
          [`${OCM_MODULE}@v1.2.1`]: { file: '/abs/ocm-v1.2.1.tgz', sha256: `sha256:${OTHER}` },
        },
      },
      '/mirrors/m.yaml',
    );
    expect(m.sources).toEqual({
      [KEY]: { file: '/mirrors/src/ocm-v1.3.1-src.tar.gz', sha256: PIN, from: 'sources: in /mirrors/m.yaml' },
      [`${OCM_MODULE}@v1.2.1`]: { file: '/abs/ocm-v1.2.1.tgz', sha256: OTHER, from: 'sources: in /mirrors/m.yaml' },
    });
    expect(parseMirrors({}, '/m.yaml').sources).toEqual({});
  });

  it('names every bad sources: field (exit 2)', () => {
    const err = thrown(() =>
      parseMirrors(
        {
          sources: {
            'not a module': { file: 'x.tgz' },
            [`${OCM_MODULE}@v1.2.1`]: { file: 'x.tgz' },
            [KEY]: { file: '', sha256: 'abc', extra: 1 },
            'example.com/m@v1.0.0': 'x.tgz',
          },
        },
        '/m.yaml',
      ),
    );
    expect(err.exitCode).toBe(ExitCode.invalidInput);
    expect(err.message.split('\n')).toEqual([
      'invalid mirrors file /m.yaml (6 problems):',
      "  sources.not a module: 'not a module' is not <module>@<version> (e.g. open-cluster-management.io/ocm@v1.3.1)",
      `  sources.${OCM_MODULE}@v1.2.1.sha256: is required: ocm-lab pins no digest for ${OCM_MODULE}@v1.2.1's source (write what sha256sum prints for the file)`,
      `  sources.${KEY}.extra: unknown field; the fields are file, sha256`,
      `  sources.${KEY}.file: must name the source archive (a .tar.gz file)`,
      `  sources.${KEY}.sha256 = abc: must be 64 lower-case hex digits (sha256sum's), optionally after sha256:`,
      '  sources.example.com/m@v1.0.0: must be a mapping with file (the .tar.gz) and sha256 (its 64 hex digits)',
    ]);
  });

  it('--ocm-source wins over $OCM_LAB_OCM_SOURCE, which wins over the lab file; each is held to the pin of the lab’s OCM version', () => {
    const lab = { ocmVersion: 'v1.3.1', ocmSource: '/labs/ocm.tgz', source: '/labs/lab.yaml' };
    const archive = (m: Mirrors) => sourceArchiveFor(m, OCM_MODULE, 'v1.3.1');
    expect(archive(withLabOcmSource(NO_MIRRORS, {}, lab))).toEqual({ file: '/labs/ocm.tgz', sha256: PIN, from: 'ocmSource: in /labs/lab.yaml' });
    process.env.OCM_LAB_OCM_SOURCE = '/env/ocm.tgz';
    expect(archive(withLabOcmSource(NO_MIRRORS, {}, lab))).toEqual({ file: '/env/ocm.tgz', sha256: PIN, from: '$OCM_LAB_OCM_SOURCE' });
    expect(archive(withLabOcmSource(NO_MIRRORS, { 'ocm-source': 'rel/ocm.tgz' }, lab))).toEqual({
      file: path.resolve('rel/ocm.tgz'),
      sha256: PIN,
      from: '--ocm-source',
    });
    // Over a mirrors file's entry for the same version too (its sha256 still counts where ocm-lab pins none).
    const mirrors = parseMirrors({ sources: { [KEY]: { file: '/m/ocm.tgz' } } }, '/m/m.yaml');
    expect(archive(withLabOcmSource(mirrors, { 'ocm-source': '/flag.tgz' }, lab))?.file).toBe('/flag.tgz');
  });

  it('an OCM version without a pinned archive digest: the flag and the lab file are exit 2 naming themselves, the environment variable is left out', () => {
    const lab = { ocmVersion: 'v1.2.1', ocmSource: '/labs/ocm.tgz', source: '/labs/lab.yaml' };
    const flag = thrown(() => withLabOcmSource(NO_MIRRORS, { 'ocm-source': '/x.tgz' }, lab));
    expect(flag).toBeInstanceOf(InvalidInputError);
    expect(flag.message).toBe('--ocm-source /x.tgz: ocm-lab pins no source archive digest for OCM v1.2.1 (it pins v1.3.1)');
    expect(thrown(() => withLabOcmSource(NO_MIRRORS, {}, lab)).message).toContain('ocmSource: in /labs/lab.yaml /labs/ocm.tgz: ocm-lab pins no');
    process.env.OCM_LAB_OCM_SOURCE = '/env/ocm.tgz';
    // CI sets the variable for every lab: a v1.2.1 lab builds from the module proxy as before.
    expect(withLabOcmSource(NO_MIRRORS, {}, { ...lab, ocmSource: undefined })).toBe(NO_MIRRORS);
    expect(sourceArchiveFor(NO_MIRRORS, OCM_MODULE, 'v1.2.1')).toBeUndefined();
    expect(sourceArchiveFor(NO_MIRRORS, OCM_MODULE, 'v1.3.1')).toEqual({ file: '/env/ocm.tgz', sha256: PIN, from: '$OCM_LAB_OCM_SOURCE' });
    expect(sourceArchiveFor(NO_MIRRORS, 'open-cluster-management.io/api', 'v1.3.0')).toBeUndefined();
    // A mirrors entry with its own sha256 makes the flag usable for that version.
    const mirrors = parseMirrors({ sources: { [`${OCM_MODULE}@v1.2.1`]: { file: '/m.tgz', sha256: OTHER } } }, '/m.yaml');
    expect(sourceArchiveFor(withOcmSource(mirrors, 'v1.2.1', '/flag.tgz', '--ocm-source'), OCM_MODULE, 'v1.2.1')).toEqual({
      file: '/flag.tgz',
      sha256: OTHER,
      from: '--ocm-source',
    });
  });

  it('the lab file: ocmSource: relative to the lab file, written back as it reads, a value that is no .tar.gz named by its field', () => {
    const config = parseLabConfig(`${VALID_LAB_FILE}ocmVersion: v1.3.1\nocmSource: ../src/ocm-v1.3.1-src.tar.gz\n`, '/labs/x/lab.yaml', addonVocabulary());
    expect(config.ocmSource).toBe('/labs/src/ocm-v1.3.1-src.tar.gz');
    expect(parseLabConfig(renderLabConfig(config), '/labs/x/lab.yaml', addonVocabulary())).toEqual(config);
    expect(parseLabConfig(VALID_LAB_FILE, '/labs/lab.yaml', addonVocabulary()).ocmSource).toBeUndefined();
    const err = thrown(() => parseLabConfig(`${VALID_LAB_FILE}ocmSource: ocm.zip\n`, '/labs/lab.yaml', addonVocabulary()));
    expect(err.exitCode).toBe(ExitCode.invalidInput);
    expect(err.message).toMatch(/\/labs\/lab\.yaml:\d+: ocmSource = "ocm\.zip": must name OCM's source archive, a \.tar\.gz/);
  });
});

/** A tar.gz of a tiny module tree under one directory, as `git archive --prefix` makes one; returns its file and sha256. */
async function makeArchive(dir: string, opts: { module?: string; vendor?: boolean; prefix?: string } = {}): Promise<{ file: string; sha256: string }> {
  const prefix = opts.prefix ?? 'ocm-v1.3.1';
  const tree = path.join(dir, 'tree', prefix);
  await fs.mkdir(path.join(tree, 'deploy', 'klusterlet', 'config'), { recursive: true });
  await fs.writeFile(path.join(tree, 'go.mod'), `module ${opts.module ?? OCM_MODULE}\n\ngo 1.25.0\n`);
  await fs.writeFile(path.join(tree, 'deploy', 'klusterlet', 'config', 'kustomization.yaml'), 'resources: []\n');
  if (opts.vendor) {
    await fs.mkdir(path.join(tree, 'vendor'), { recursive: true });
    await fs.writeFile(path.join(tree, 'vendor', 'modules.txt'), '# example.com/x v1.0.0\n');
  }
  const file = path.join(dir, `${prefix}-${crypto.randomBytes(3).toString('hex')}.tar.gz`);
  await execa('tar', ['-czf', file, '-C', path.join(dir, 'tree'), prefix]);
  await fs.rm(path.join(dir, 'tree'), { recursive: true });
  return {
    file,
    sha256: crypto
      .createHash('sha256')
      .update(await fs.readFile(file))
      .digest('hex'),
  };
}

/** Everything under `dir`, relative, sorted. */
async function listing(dir: string): Promise<string[]> {
  return (await fs.readdir(dir, { recursive: true }).catch(() => [] as string[])).sort();
}

describe('OCM source archives: checked and extracted into the cache', () => {
  let tmp: string;
  let cache: string;
  beforeEach(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-src-'));
    cache = path.join(tmp, 'cache');
  });
  afterEach(async () => {
    await fs.rm(tmp, { recursive: true, force: true });
  });

  it('extracts a verified archive whole under a name that carries its digest, and uses that tree again without reading the file', async () => {
    const { file, sha256 } = await makeArchive(tmp);
    const archive = { file, sha256, from: '--ocm-source' };
    const progress: string[] = [];
    const dir = await ensureSourceTree(archive, OCM_MODULE, 'v1.3.1', { cacheDir: cache, progress: (l) => progress.push(l) });
    expect(dir).toBe(path.join(cache, 'go-sources', 'open-cluster-management.io', `ocm@v1.3.1-${sha256.slice(0, 16)}`));
    expect(dir).toBe(sourceTreeDir(cache, OCM_MODULE, 'v1.3.1', sha256));
    expect(await fs.readFile(path.join(dir, 'go.mod'), 'utf8')).toContain(`module ${OCM_MODULE}`);
    // Nothing else beside it: the scratch directory it was extracted into is gone.
    expect(await fs.readdir(path.dirname(dir))).toEqual([path.basename(dir)]);
    expect(progress).toEqual([`extracting ${file} (checking its sha256)`, `extracted ${OCM_MODULE}@v1.3.1 from ${file}`]);
    expect(await sourceArchiveState(archive, OCM_MODULE, 'v1.3.1', cache)).toEqual({ state: 'extracted', dir });
    await fs.rm(file);
    expect(await ensureSourceTree(archive, OCM_MODULE, 'v1.3.1', { cacheDir: cache })).toBe(dir);
  });

  it('two callers at once extract once (both operators ask for the tree together)', async () => {
    const { file, sha256 } = await makeArchive(tmp);
    const archive = { file, sha256, from: 'test' };
    const [a, b] = await Promise.all([
      ensureSourceTree(archive, OCM_MODULE, 'v1.3.1', { cacheDir: cache }),
      ensureSourceTree(archive, OCM_MODULE, 'v1.3.1', { cacheDir: cache }),
    ]);
    expect(a).toBe(b);
    expect(await fs.readdir(path.dirname(a))).toEqual([path.basename(a)]);
  });

  it('refuses an archive whose sha256 is not the one it is held to: exit 7 naming the file, the expected and the actual digest; nothing left behind', async () => {
    const { file, sha256 } = await makeArchive(tmp);
    const err = (await ensureSourceTree({ file, sha256: PIN, from: '--ocm-source' }, OCM_MODULE, 'v1.3.1', { cacheDir: cache }).catch(
      (e: unknown) => e,
    )) as DigestMismatchError;
    expect(err).toBeInstanceOf(DigestMismatchError);
    expect(err.exitCode).toBe(ExitCode.integrity);
    expect(err.message).toBe(
      `source archive ${file} (--ocm-source) of ${OCM_MODULE}@v1.3.1: digest mismatch: expected ${PIN}, got ${sha256}; nothing was cached`,
    );
    expect(err.hint).toContain('is not the archive ocm-lab pins');
    // Neither the tree nor a half-extracted scratch directory.
    expect(await listing(path.join(cache, 'go-sources'))).toEqual(['open-cluster-management.io']);
    expect(await sourceArchiveState({ file, sha256: PIN, from: 'x' }, OCM_MODULE, 'v1.3.1', cache)).toEqual({ state: 'mismatch', actual: sha256 });
  });

  it('a file that is no tar.gz, or a tree of another module, leaves nothing behind either', async () => {
    const junk = path.join(tmp, 'junk.tar.gz');
    await fs.writeFile(junk, 'not a tarball at all');
    const junkSha = crypto.createHash('sha256').update('not a tarball at all').digest('hex');
    // Held to the junk's own digest (as a mirrors entry could be), tar's failure is what is reported (exit 3).
    const notTar = await ensureSourceTree({ file: junk, sha256: junkSha, from: 'test' }, OCM_MODULE, 'v1.3.1', { cacheDir: cache }).catch((e: unknown) => e);
    expect(notTar).toBeInstanceOf(MissingPrerequisiteError);
    expect((notTar as Error).message).toContain(`tar could not extract the source archive ${junk} (test)`);
    // Held to another digest, the mismatch is what counts (exit 7), even though tar failed too.
    const mismatch = await ensureSourceTree({ file: junk, sha256: PIN, from: 'test' }, OCM_MODULE, 'v1.3.1', { cacheDir: cache }).catch((e: unknown) => e);
    expect(mismatch).toBeInstanceOf(DigestMismatchError);
    expect((mismatch as Error).message).toContain(`got ${junkSha}`);

    const other = await makeArchive(tmp, { module: 'example.com/other' });
    const wrong = await ensureSourceTree({ ...other, from: 'test' }, OCM_MODULE, 'v1.3.1', { cacheDir: cache }).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(InvalidInputError);
    expect((wrong as Error).message).toBe(`source archive ${other.file} (test) does not hold ${OCM_MODULE}: its go.mod declares example.com/other`);

    const missing = await ensureSourceTree({ file: path.join(tmp, 'nope.tgz'), sha256: PIN, from: '--ocm-source' }, OCM_MODULE, 'v1.3.1', {
      cacheDir: cache,
    }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(MissingPrerequisiteError);
    expect((missing as Error).message).toContain(`nope.tgz (--ocm-source): ENOENT`);
    expect(await listing(path.join(cache, 'go-sources'))).toEqual(['open-cluster-management.io']);
  });

  it('ensureGoModuleSource takes the named archive instead of asking Go or the module proxy', async () => {
    const { file, sha256 } = await makeArchive(tmp);
    const mirrors: Mirrors = { ...NO_MIRRORS, sources: { [KEY]: { file, sha256, from: 'sources: in /m.yaml' } } };
    const savedPath = process.env.PATH;
    process.env.PATH = '/usr/bin:/bin'; // tar and gzip, no go
    try {
      const dir = await ensureGoModuleSource(OCM_MODULE, 'v1.3.1', { mirrors, cacheDir: cache });
      expect(await fs.readFile(path.join(dir, 'deploy', 'klusterlet', 'config', 'kustomization.yaml'), 'utf8')).toBe('resources: []\n');
    } finally {
      process.env.PATH = savedPath;
    }
  });
});

describe('OCM source archives: the build', () => {
  let tmp: string;
  let savedEnv: string | undefined;
  beforeEach(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-srcbuild-'));
    savedEnv = process.env.OCM_LAB_OCM_SOURCE;
    delete process.env.OCM_LAB_OCM_SOURCE;
  });
  afterEach(async () => {
    if (savedEnv === undefined) delete process.env.OCM_LAB_OCM_SOURCE;
    else process.env.OCM_LAB_OCM_SOURCE = savedEnv;
    await fs.rm(tmp, { recursive: true, force: true });
  });

  it('builds in the tree itself with -mod=vendor (offline), the same flags and -X stamps, no wrapper module, GOWORK off', () => {
    const recipe = ocmRecipe('v1.3.1');
    const base = { PATH: '/usr/bin', GOFLAGS: '-mod=mod', GONOSUMDB: 'corp.example', HOME: '/root' };
    const command = sourceBuildCommand(recipe, ['registration', 'addon'], '/cache/go-sources/ocm', '/cache/build/out', true, base);
    expect(command.cwd).toBe('/cache/go-sources/ocm');
    expect(command.args).toEqual([
      'build',
      '-v',
      '-trimpath',
      '-ldflags',
      '-s -w -X open-cluster-management.io/ocm/pkg/version.versionFromGit=v1.3.1 -X open-cluster-management.io/ocm/pkg/version.majorFromGit=1 ' +
        '-X open-cluster-management.io/ocm/pkg/version.minorFromGit=3',
      '-o',
      '/cache/build/out/',
      'open-cluster-management.io/ocm/cmd/registration',
      'open-cluster-management.io/ocm/cmd/addon',
    ]);
    expect(command.env).toEqual({
      PATH: '/usr/bin',
      HOME: '/root',
      CGO_ENABLED: '0',
      GOFLAGS: '-mod=vendor -buildvcs=false',
      GONOSUMDB: 'corp.example,open-cluster-management.io,sigs.k8s.io/about-api',
      GOWORK: 'off',
    });
    // Without vendor/, the dependencies go.sum names come from the module proxy, go.mod left as it is.
    expect(sourceBuildCommand(recipe, ['work'], '/src', '/out', false, base).env.GOFLAGS).toBe('-mod=readonly -buildvcs=false');
  });

  it('ensureBinaries hands the builder the extracted tree, in a build directory of its own, and records where the binaries came from', async () => {
    const cache = path.join(tmp, 'cache');
    const { file, sha256 } = await makeArchive(tmp, { vendor: true });
    const requests: BuildRequest[] = [];
    const builder = async (req: BuildRequest) => {
      requests.push(req);
      await fs.mkdir(req.outDir, { recursive: true });
      for (const n of req.names) await fs.writeFile(path.join(req.outDir, n), `#!/bin/sh\necho "${n} version v1.3.1"\n`, { mode: 0o755 });
    };
    const mirrors: Mirrors = { ...NO_MIRRORS, sources: { [KEY]: { file, sha256, from: '--ocm-source' } } };
    const savedPath = process.env.PATH;
    process.env.PATH = '/usr/bin:/bin'; // tar and gzip, no go
    try {
      const found = await ensureBinaries(['registration', 'work'], { cacheDir: cache, artifacts: 'build', ocmVersion: 'v1.3.1', mirrors, builder });
      expect(found.registration).toBe(path.join(cache, 'bin', 'ocm-v1.3.1', 'registration'));
    } finally {
      process.env.PATH = savedPath;
    }
    expect(requests).toHaveLength(1);
    expect(requests[0]!.source).toEqual({ dir: sourceTreeDir(cache, OCM_MODULE, 'v1.3.1', sha256), from: `source archive ${file}` });
    expect(requests[0]!.workDir).toBe(path.join(cache, 'build', 'ocm-v1.3.1-source'));
    const manifest = JSON.parse(await fs.readFile(path.join(cache, 'bin', 'ocm-v1.3.1', 'manifest.json'), 'utf8')) as { source: string; from: string };
    expect(manifest).toMatchObject({ source: 'build', from: `source archive ${file} (sha256 ${sha256})` });
  });

  it('refuses an archive for a recipe checked by Go build information, which a build in the tree leaves at (devel) (exit 3)', async () => {
    const mirrors = parseMirrors({ sources: { 'open-cluster-management.io/cluster-proxy@v0.10.0': { file: '/x.tgz', sha256: OTHER } } }, '/m.yaml');
    const err = await ensureBinaries(['cluster-proxy-manager'], {
      cacheDir: path.join(tmp, 'cache'),
      artifacts: 'build',
      mirrors,
      builder: async () => undefined,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MissingPrerequisiteError);
    expect((err as Error).message).toContain("cluster-proxy v0.10.0's binaries are checked by their Go build information");
  });

  it('a mismatching archive stops the build before Go runs (exit 7), with nothing cached', async () => {
    const cache = path.join(tmp, 'cache');
    const { file } = await makeArchive(tmp);
    const requests: BuildRequest[] = [];
    const mirrors: Mirrors = { ...NO_MIRRORS, sources: { [KEY]: { file, sha256: PIN, from: '--ocm-source' } } };
    const err = await ensureBinaries(['placement'], {
      cacheDir: cache,
      artifacts: 'build',
      ocmVersion: 'v1.3.1',
      mirrors,
      builder: async (req) => void requests.push(req),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DigestMismatchError);
    expect(requests).toEqual([]);
    await expect(fs.access(path.join(cache, 'bin', 'ocm-v1.3.1'))).rejects.toThrow();
  });
});
