import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../../src/util/exec.js';
import { ExitCode } from '../../src/errors.js';
import { choosePort } from '../../src/images/registry/container.js';
import { localRegistryHosting } from '../../src/images/registry/hosting.js';
import { registryHostsFiles, writeHostsScript } from '../../src/images/registry/mirrors.js';
import { registryEndpoint } from '../../src/provision/oci/reference.js';
import { registryName, registryTarget } from '../../src/images/registry/push.js';
import { labImages } from '../../src/images/lab-images.js';

/** The pure parts of the kind labs' image registry: references, containerd's hosts.toml, KEP-1755, the port choice. */
describe('image references as a registry sees them', () => {
  it('puts one-part names under docker.io/library and keeps a host and path', () => {
    expect(registryName('ocm-lab:dev')).toEqual({ host: 'docker.io', repository: 'library/ocm-lab', tag: 'dev' });
    expect(registryName('quay.io/open-cluster-management/registration:v1.2.1')).toEqual({
      host: 'quay.io',
      repository: 'open-cluster-management/registration',
      tag: 'v1.2.1',
    });
    expect(registryName('localhost:5001/my-addon')).toEqual({ host: 'localhost:5001', repository: 'my-addon', tag: 'latest' });
    expect(registryName('me/tool:1')).toEqual({ host: 'docker.io', repository: 'me/tool', tag: '1' });
    expect(() => registryName(`quay.io/x@sha256:${'ab'.repeat(32)}`)).toThrow(/by digest/);
    expect(registryTarget(5001, 'ocm-lab:dev')).toBe('127.0.0.1:5001/library/ocm-lab:dev');
    expect(registryEndpoint('docker.io')).toBe('registry-1.docker.io');
  });
});

describe("containerd's hosts.toml in every node", () => {
  const files = registryHostsFiles(5001, labImages({ ocmVersion: 'v1.2.1' }));
  it('sends localhost:<port>, the registry name and the lab images upstreams to the registry, upstream as the fallback', () => {
    expect(Object.keys(files).sort()).toEqual(['docker.io', 'localhost:5001', 'ocm-lab-registry:5000', 'quay.io']);
    expect(files['localhost:5001']).toContain('[host."http://ocm-lab-registry:5000"]');
    expect(files['localhost:5001']).not.toContain('server =');
    expect(files['ocm-lab-registry:5000']).toContain('server = "http://ocm-lab-registry:5000"');
    expect(files['quay.io']).toMatch(/server = "https:\/\/quay.io"\n\n\[host."http:\/\/ocm-lab-registry:5000"\]\n {2}capabilities = \["pull", "resolve"\]/);
  });

  let dir: string | undefined;
  afterAll(async () => {
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });
  it('the script replaces our directories (a stale port goes) and leaves others alone', async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-certs-d-'));
    await run('sh', ['-c', writeHostsScript(registryHostsFiles(5002, ['ocm-lab:dev']), dir)]);
    await fs.mkdir(path.join(dir, 'example.com'));
    await fs.writeFile(path.join(dir, 'example.com', 'hosts.toml'), 'server = "https://example.com"\n');
    await run('sh', ['-c', writeHostsScript(files, dir)]);
    expect((await fs.readdir(dir)).sort()).toEqual(['docker.io', 'example.com', 'localhost:5001', 'ocm-lab-registry:5000', 'quay.io']);
    expect(await fs.readFile(path.join(dir, 'quay.io', 'hosts.toml'), 'utf8')).toBe(files['quay.io']);
    expect(await fs.readFile(path.join(dir, 'example.com', 'hosts.toml'), 'utf8')).toBe('server = "https://example.com"\n');
  });
});

describe('KEP-1755 local-registry-hosting', () => {
  it('carries host, hostFromContainerRuntime, hostFromClusterNetwork and help in kube-public', () => {
    const cm = localRegistryHosting(5001);
    expect(cm.metadata).toEqual({ name: 'local-registry-hosting', namespace: 'kube-public' });
    const text = (cm as unknown as { data: Record<string, string> }).data['localRegistryHosting.v1'];
    expect(text).toContain('host: "localhost:5001"');
    expect(text).toContain('hostFromContainerRuntime: "ocm-lab-registry:5000"');
    expect(text).toContain('hostFromClusterNetwork: "ocm-lab-registry:5000"');
    expect(text).toMatch(/^help: "https:\/\/.+"$/m);
  });
});

describe("the registry's port", () => {
  const busy = (taken: number[]) => (port: number) => Promise.resolve(!taken.includes(port));
  it('takes 5001 when free, another when it is taken, and the asked one or exit 3 naming it and the setting', async () => {
    expect(await choosePort({}, busy([]))).toBe(5001);
    const other = await choosePort({}, busy([5001]));
    expect(other).not.toBe(5001);
    expect(other).toBeGreaterThan(0);
    expect(await choosePort({ OCM_LAB_REGISTRY_PORT: '5055' }, busy([5001]))).toBe(5055);
    const refused = await choosePort({ OCM_LAB_REGISTRY_PORT: '5055' }, busy([5055])).catch((e: unknown) => e);
    expect(refused).toMatchObject({ exitCode: ExitCode.missingPrerequisite });
    expect(String(refused)).toMatch(/port 5055 .*OCM_LAB_REGISTRY_PORT/);
    await expect(choosePort({ OCM_LAB_REGISTRY_PORT: 'x' }, busy([]))).rejects.toMatchObject({ exitCode: ExitCode.missingPrerequisite });
  });
});
