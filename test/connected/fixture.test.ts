import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheDir } from '../../src/paths.js';
import { KUBERNETES_VERSION, OCM_VERSION, requireKubernetesRelease } from '../../src/provision/versions.js';
import { startConnectedWorld, type ConnectedWorld } from '../support/connected-world/index.js';
import { sha256File } from '../support/connected-world/files.js';
import { imageArch } from '../support/connected-world/images.js';

// The fixture itself: it answers as the real names inside its namespace only, with the test CA, and its modes work.
describe('the simulated connected world', () => {
  let world: ConnectedWorld;
  let hostsBefore: string;
  const arch = imageArch();

  beforeAll(async () => {
    hostsBefore = await fs.readFile('/etc/hosts', 'utf8');
    world = await startConnectedWorld();
  });
  afterAll(async () => {
    await world?.close();
    expect(await fs.readFile('/etc/hosts', 'utf8')).toBe(hostsBefore);
  });

  const curl = (...args: string[]) => world.run('curl', ['-sS', '--fail', '--location', '--max-time', '20', ...args]);

  it('answers as quay.io with the distribution API, trusted through the system bundle of the namespace', async () => {
    const r = await curl('-i', 'https://quay.io/v2/');
    expect(r.all).toMatch(/docker-distribution-api-version: registry\/2\.0/i);
    expect(r.exitCode).toBe(0);
  });

  it("serves OCM's images under their real names, tags resolving to the digests of the mirrors file", async () => {
    const digests = (await fs.readFile(world.mirrorsFile, 'utf8')).trim().split('\n');
    expect(digests.length).toBe(1 + world.images.length);
    for (const image of world.images) {
      expect(digests).toContain(`  ${image.reference}: ${image.digest}`);
      const [, repo, tag] = /^quay\.io\/(.+):(.+)$/.exec(image.reference) ?? [];
      const accept = 'application/vnd.oci.image.index.v1+json';
      // Node's fetch trusts the test CA through NODE_EXTRA_CA_CERTS, as the CLI will.
      const script = `fetch('https://quay.io/v2/${repo}/manifests/${tag}', { headers: { accept: '${accept}' } })
        .then(async (r) => console.log(r.status, r.headers.get('docker-content-digest'), (await r.json()).manifests.map((m) => m.platform.architecture).join(',')))`;
      const r = await world.run('node', ['-e', script]);
      expect(r.all.trim()).toBe(`200 ${image.digest} ${arch === 'arm64' ? 'amd64' : 'arm64'},${arch}`);
    }
  });

  it('answers as dl.k8s.io (redirected to cdn.dl.k8s.io) with binaries built here and their .sha256', async () => {
    const url = `https://dl.k8s.io/release/${KUBERNETES_VERSION}/bin/linux/${arch}/kubectl`;
    const sum = await curl(`${url}.sha256`);
    expect(sum.exitCode, sum.all).toBe(0);
    expect(sum.stdout.trim()).toBe(await sha256File(path.join(cacheDir(), 'bin', `kubernetes-${KUBERNETES_VERSION}`, 'kubectl')));
    const head = await curl('-o', '/dev/null', '-w', '%{http_code} %{url_effective} %{size_download}', url);
    expect(head.stdout).toMatch(new RegExp(`^200 https://cdn\\.dl\\.k8s\\.io/release/${KUBERNETES_VERSION}/bin/linux/${arch}/kubectl [1-9]\\d+$`));
  });

  it("answers as GitHub's release downloads: the etcd tarball and SHA256SUMS through release-assets.githubusercontent.com", async () => {
    const etcd = requireKubernetesRelease().etcd;
    const base = `https://github.com/etcd-io/etcd/releases/download/${etcd}`;
    const sums = await curl('-w', '\n%{url_effective}', `${base}/SHA256SUMS`);
    expect(sums.exitCode, sums.all).toBe(0);
    const [line, effective] = sums.stdout.split('\n').filter(Boolean);
    expect(effective).toMatch(/^https:\/\/release-assets\.githubusercontent\.com\/github-production-release-asset\//);
    const [hex, name] = (line ?? '').split(/\s+/);
    expect(name).toBe(`etcd-${etcd}-linux-${arch}.tar.gz`);
    const tarball = await world.run('sh', ['-c', `curl -sSfL '${base}/${name}' | sha256sum`]);
    expect(tarball.stdout.split(' ')[0]).toBe(hex);
  });

  it("answers as proxy.golang.org with OCM's module (info, go.mod, zip) from this machine's module cache", async () => {
    const base = `https://proxy.golang.org/open-cluster-management.io/ocm/@v/${OCM_VERSION}`;
    const info = await curl(`${base}.info`);
    expect(info.exitCode, info.all).toBe(0);
    expect(JSON.parse(info.stdout)).toMatchObject({ Version: OCM_VERSION });
    const zip = await world.run('sh', ['-c', `curl -sSfL '${base}.zip' | sha256sum`]);
    const local = path.join(
      process.env.GOMODCACHE ?? path.join(os.homedir(), 'go/pkg/mod'),
      'cache/download/open-cluster-management.io/ocm/@v',
      `${OCM_VERSION}.zip`,
    );
    expect(zip.stdout.split(' ')[0]).toBe(await sha256File(local));
  });

  it('has no Go on the PATH it gives the CLI, and the host sees none of its mounts', async () => {
    const go = await world.run('sh', ['-c', 'command -v go']);
    expect(go.exitCode).not.toBe(0);
    const inside = await world.run('cat', ['/proc/self/mountinfo']);
    expect(inside.stdout).toMatch(/ \/etc\/hosts /);
    const hostsInside = await world.run('cat', ['/etc/hosts']);
    expect(hostsInside.stdout).toMatch(/^127\.0\.77\.1 quay\.io registry\.k8s\.io registry-1\.docker\.io ghcr\.io$/m);
    expect(await fs.readFile('/etc/hosts', 'utf8')).toBe(hostsBefore);
    expect(await fs.readFile('/proc/self/mountinfo', 'utf8')).not.toContain(world.dir);
  });

  it('serves a corrupted layer when told to (wrong bytes, right length), and the right ones after repair', async () => {
    const { digest } = await world.corruptImageLayer('registration');
    const blob = `https://quay.io/v2/open-cluster-management/registration/blobs/${digest}`;
    const hashOf = async () => (await world.run('sh', ['-c', `curl -sSfL '${blob}' | sha256sum`])).stdout.split(' ')[0];
    expect(`sha256:${await hashOf()}`).not.toBe(digest);
    await world.repair();
    expect(`sha256:${await hashOf()}`).toBe(digest);
    world.corruptFile('kubectl');
    const spoiled = await world.run('sh', ['-c', `curl -sSfL https://dl.k8s.io/release/${KUBERNETES_VERSION}/bin/linux/${arch}/kubectl | sha256sum`]);
    const published = await curl(`https://dl.k8s.io/release/${KUBERNETES_VERSION}/bin/linux/${arch}/kubectl.sha256`);
    expect(spoiled.stdout.split(' ')[0]).not.toBe(published.stdout.trim());
    await world.repair();
  });

  it('answers nothing when stopped (connection refused), and again when started', async () => {
    await world.stop();
    const refused = await curl('https://quay.io/v2/');
    expect(refused.exitCode, refused.all).toBe(7);
    expect((await curl(`https://dl.k8s.io/release/${KUBERNETES_VERSION}/bin/linux/${arch}/kubectl.sha256`)).exitCode).toBe(7);
    await world.start();
    expect((await curl('https://quay.io/v2/')).exitCode).toBe(0);
  });

  it('keeps every digest it names: no two images share one', () => {
    expect(new Set(world.images.map((i) => i.digest)).size).toBe(world.images.length);
    expect(world.images.every((i) => /^sha256:[0-9a-f]{64}$/.test(i.digest))).toBe(true);
  });
});
