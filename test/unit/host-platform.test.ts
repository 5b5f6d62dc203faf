import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode, LabError } from '../../src/errors.js';
import { executableName, HOST_PLATFORM_ENV, HOST_PLATFORMS, hostPlatform, type HostPlatform } from '../../src/provision/platform.js';
import { kindRelease, kubernetesReleaseFile } from '../../src/provision/recipes.js';
import { KIND_VERSION } from '../../src/provision/versions.js';
import { kindVersionOf, locateKind } from '../../src/runtime/kind/kind-cli.js';

const PAIRS: HostPlatform[] = HOST_PLATFORMS.map((p) => ({ os: p.split('/')[0]!, arch: p.split('/')[1]! }));

describe('host platform: $OCM_LAB_HOST_PLATFORM', () => {
  it('is this machine in Go spelling without it, the named os/arch with it', () => {
    expect(hostPlatform({})).toEqual({
      os: process.platform === 'win32' ? 'windows' : process.platform,
      arch: process.arch === 'x64' ? 'amd64' : process.arch,
    });
    expect(hostPlatform({ [HOST_PLATFORM_ENV]: 'darwin/arm64' })).toEqual({ os: 'darwin', arch: 'arm64' });
    expect(HOST_PLATFORMS).toEqual(['linux/amd64', 'linux/arm64', 'darwin/amd64', 'darwin/arm64', 'windows/amd64', 'windows/arm64']);
  });

  it('a bad value is exit 2 naming the variable and the accepted values', () => {
    for (const bad of ['macos/arm64', 'darwin/x64', 'darwin', 'linux/amd64/v2']) {
      let err: unknown;
      try {
        hostPlatform({ [HOST_PLATFORM_ENV]: bad });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(LabError);
      expect((err as LabError).exitCode).toBe(ExitCode.invalidInput);
      expect((err as LabError).message).toBe(`OCM_LAB_HOST_PLATFORM=${bad}: not a platform ocm-lab plans for; use one of ${HOST_PLATFORMS.join(', ')}`);
    }
  });
});

describe('kubectl and kind for each of the six platforms', () => {
  for (const p of PAIRS) {
    const name = `${p.os}/${p.arch}`;
    it(name, () => {
      const exe = p.os === 'windows' ? '.exe' : '';
      const kubectl = kubernetesReleaseFile('v1.37.2', 'kubectl', p);
      expect(kubectl.url).toBe(`https://dl.k8s.io/release/v1.37.2/bin/${p.os}/${p.arch}/kubectl${exe}`);
      expect(kubectl.sumsUrl).toBe(`${kubectl.url}.sha256`);
      expect(kubectl.fileName).toBe(`kubectl${exe}`);
      expect(executableName('kubectl', p)).toBe(`kubectl${exe}`);
      // The server binaries run in Linux whatever the host (local's processes, kind's node image).
      expect(kubernetesReleaseFile('v1.37.2', 'kube-apiserver', p).url).toBe(`https://dl.k8s.io/release/v1.37.2/bin/linux/${p.arch}/kube-apiserver`);
      const kind = kindRelease(KIND_VERSION, name);
      if (name === 'windows/arm64') {
        // kind publishes no windows/arm64 binary: kind is built here there.
        expect(kind).toBeUndefined();
        return;
      }
      expect(kind?.kind).toBe('file');
      if (kind?.kind !== 'file') return;
      const file = kind.file('kind');
      expect(file.url).toBe(`https://github.com/kubernetes-sigs/kind/releases/download/${KIND_VERSION}/kind-${p.os}-${p.arch}`);
      expect(file.sumsUrl).toBe(`${file.url}.sha256sum`);
      expect(file.sha256).toMatch(/^[0-9a-f]{64}$/);
    });
  }

  it('pins kubectl where a digest was found, and trusts the published .sha256 elsewhere', () => {
    expect(kubernetesReleaseFile('v1.36.3', 'kubectl', { os: 'linux', arch: 'amd64' }).sha256).toBe(
      'ebbd080e7c2e275093b55915722043257eb24004363e20acb3c4d71919f88336',
    );
    expect(kubernetesReleaseFile('v1.36.3', 'kubectl', { os: 'darwin', arch: 'arm64' }).sha256).toBeUndefined();
    expect(kubernetesReleaseFile('v1.37.2', 'kubectl', { os: 'linux', arch: 'amd64' })).toEqual({
      url: 'https://dl.k8s.io/release/v1.37.2/bin/linux/amd64/kubectl',
      sumsUrl: 'https://dl.k8s.io/release/v1.37.2/bin/linux/amd64/kubectl.sha256',
      fileName: 'kubectl',
    });
  });
});

describe('a kind on PATH', () => {
  let dir: string;
  const kindPrinting = async (sub: string, printed: string) => {
    const bin = path.join(dir, sub);
    await fs.mkdir(bin, { recursive: true });
    await fs.writeFile(path.join(bin, 'kind'), `#!/bin/sh\necho '${printed}'\n`, { mode: 0o755 });
    return bin;
  };

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-kind-path-'));
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('reads the version kind says', () => {
    expect(kindVersionOf('kind v0.33.0 go1.25.1 linux/amd64')).toBe('v0.33.0');
    expect(kindVersionOf('kind v0.34.0-alpha go1.25.1 linux/amd64')).toBe('v0.34.0-alpha');
    expect(kindVersionOf('nothing')).toBeNull();
  });

  it('is used when kind version says the pinned version', async () => {
    const bin = await kindPrinting('right', `kind ${KIND_VERSION} go1.25.1 linux/amd64`);
    const lines: string[] = [];
    const env = { PATH: bin, OCM_LAB_CACHE_DIR: path.join(dir, 'cache') };
    expect(await locateKind(env, (l) => lines.push(l))).toBe(path.join(bin, 'kind'));
    expect(lines).toEqual([]);
  });

  it('of another version is passed over for the pinned one, said in one line', async () => {
    const bin = await kindPrinting('old', 'kind v0.20.0 go1.20.4 linux/amd64');
    const lines: string[] = [];
    const env = { PATH: bin, OCM_LAB_CACHE_DIR: path.join(dir, 'cache') };
    expect(await locateKind(env, (l) => lines.push(l))).toBeNull();
    expect(lines).toEqual([
      `kind on PATH (${path.join(bin, 'kind')}) is v0.20.0, not ${KIND_VERSION}: using kind ${KIND_VERSION} from the ocm-lab cache (downloaded or built)`,
    ]);
  });
});
