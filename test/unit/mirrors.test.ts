import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode, LabError } from '../../src/errors.js';
import { downloadUrl, loadMirrors, NO_MIRRORS, parseMirrors, registryBase, requiredDigest } from '../../src/provision/mirrors.js';

const DIGEST = `sha256:${'a'.repeat(64)}`;

function problem(raw: unknown): LabError {
  try {
    parseMirrors(raw, '/m.yaml');
  } catch (err) {
    return err as LabError;
  }
  throw new Error('accepted');
}

describe('mirrors file', () => {
  it('reads registries, downloads and digests, dropping trailing slashes', () => {
    const m = parseMirrors(
      {
        registries: { 'quay.io': 'https://mirror.example.com:5000/' },
        downloads: { 'https://dl.k8s.io/': 'https://mirror.example.com/k8s' },
        digests: { 'quay.io/open-cluster-management/registration:v1.2.1': DIGEST },
      },
      '/m.yaml',
    );
    expect(m.registries).toEqual({ 'quay.io': 'https://mirror.example.com:5000' });
    expect(m.downloads).toEqual({ 'https://dl.k8s.io': 'https://mirror.example.com/k8s' });
    expect(parseMirrors(null, '/m.yaml')).toEqual(NO_MIRRORS);
  });

  it('names every bad field (exit 2)', () => {
    const err = problem({
      registries: { 'quay.io': 'ftp://x' },
      downloads: { 'dl.k8s.io': 'https://m' },
      digests: { 'quay.io/x:v1': 'sha256:abc', 'no-tag': DIGEST },
      extra: 1,
    });
    expect(err.exitCode).toBe(ExitCode.invalidInput);
    expect(err.message.split('\n')).toEqual([
      'invalid mirrors file /m.yaml (5 problems):',
      '  registries.quay.io = ftp://x: must be an http(s) URL such as https://mirror.example.com:5000',
      "  downloads.dl.k8s.io: 'dl.k8s.io' is not an http(s) URL prefix such as https://dl.k8s.io",
      '  digests.quay.io/x:v1 = sha256:abc: must be sha256: followed by 64 lower-case hex digits',
      "  digests.no-tag: 'no-tag' is not an image reference name:tag (e.g. quay.io/org/image:v1.2.1) or a download URL",
      '  extra: unknown field; the fields are registries, downloads, digests, sources',
    ]);
    expect(problem(['a']).message).toContain('the file must be a mapping');
    expect(problem({ registries: ['quay.io'] }).message).toContain('registries: must be a mapping');
  });

  it('sends registries to their mirror, else to the host (Docker Hub to registry-1.docker.io)', () => {
    const m = parseMirrors({ registries: { 'registry-1.docker.io': 'https://hub.mirror' } }, '/m.yaml');
    expect(registryBase(NO_MIRRORS, 'quay.io')).toBe('https://quay.io');
    expect(registryBase(NO_MIRRORS, 'docker.io')).toBe('https://registry-1.docker.io');
    expect(registryBase(m, 'docker.io')).toBe('https://hub.mirror');
    expect(registryBase(m, 'quay.io')).toBe('https://quay.io');
  });

  it('rewrites downloads by the longest prefix, on whole path segments only', () => {
    const m = parseMirrors({ downloads: { 'https://github.com': 'https://gh.mirror', 'https://github.com/etcd-io': 'https://etcd.mirror/x' } }, '/m.yaml');
    expect(downloadUrl(m, 'https://github.com/etcd-io/etcd/releases/download/v3.7.0/SHA256SUMS')).toBe(
      'https://etcd.mirror/x/etcd/releases/download/v3.7.0/SHA256SUMS',
    );
    expect(downloadUrl(m, 'https://github.com/kubernetes-sigs/kind/releases/download/v0.33.0/kind-linux-amd64')).toBe(
      'https://gh.mirror/kubernetes-sigs/kind/releases/download/v0.33.0/kind-linux-amd64',
    );
    expect(downloadUrl(m, 'https://github.company.com/x')).toBe('https://github.company.com/x');
    expect(downloadUrl(NO_MIRRORS, 'https://dl.k8s.io/release/x')).toBe('https://dl.k8s.io/release/x');
  });

  it('requires the mirrors file digest over the built-in pin', () => {
    const m = parseMirrors({ digests: { 'kindest/node:v1.37.0': DIGEST } }, '/m.yaml');
    expect(requiredDigest(m, 'kindest/node:v1.37.0', 'sha256:pinned')).toBe(DIGEST);
    expect(requiredDigest(m, 'kindest/node:v1.36.4', 'sha256:pinned')).toBe('sha256:pinned');
    expect(requiredDigest(NO_MIRRORS, 'quay.io/x:v1')).toBeUndefined();
  });

  describe('loadMirrors', () => {
    let tmp: string;
    let saved: string | undefined;
    beforeEach(async () => {
      tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-mirrors-'));
      saved = process.env.OCM_LAB_MIRRORS;
    });
    afterEach(async () => {
      if (saved === undefined) delete process.env.OCM_LAB_MIRRORS;
      else process.env.OCM_LAB_MIRRORS = saved;
      await fs.rm(tmp, { recursive: true, force: true });
    });

    it('reads the named file, else $OCM_LAB_MIRRORS, else none', async () => {
      const file = path.join(tmp, 'mirrors.yaml');
      await fs.writeFile(file, `digests:\n  quay.io/x:v1: ${DIGEST}\n`);
      expect((await loadMirrors(file)).digests).toEqual({ 'quay.io/x:v1': DIGEST });
      process.env.OCM_LAB_MIRRORS = file;
      expect((await loadMirrors()).digests).toEqual({ 'quay.io/x:v1': DIGEST });
      delete process.env.OCM_LAB_MIRRORS;
      expect(await loadMirrors()).toEqual(NO_MIRRORS);
    });

    it('refuses a missing file or one that is not YAML (exit 2)', async () => {
      const missing = (await loadMirrors(path.join(tmp, 'nope.yaml')).catch((e: unknown) => e)) as LabError;
      expect(missing.exitCode).toBe(ExitCode.invalidInput);
      expect(missing.message).toBe(`cannot read mirrors file ${path.join(tmp, 'nope.yaml')}: ENOENT`);
      const bad = path.join(tmp, 'bad.yaml');
      await fs.writeFile(bad, 'registries: [\n');
      expect(((await loadMirrors(bad).catch((e: unknown) => e)) as LabError).message).toContain(`invalid mirrors file ${bad}: not YAML`);
    });
  });
});
