import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { cacheDir } from '../../src/paths.js';
import { KUBERNETES_BINARIES } from '../../src/provision/recipes.js';
import { KUBERNETES_VERSION, requireKubernetesRelease } from '../../src/provision/versions.js';
import { startConnectProxy, type ConnectProxy } from '../support/connect-proxy.js';
import { startConnectedWorld, type ConnectedWorld } from '../support/connected-world/index.js';
import { sha256File } from '../support/connected-world/files.js';
import { worldAddressOf, type WorldAddresses } from '../support/connected-world/names.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli/main.js');
/** The world's servers: addresses of their own, so this file never shares them with another world. */
const SERVED: WorldAddresses = { registry: '127.0.78.1', files: '127.0.78.2' };
/** What the publishers' names resolve to inside the namespace: an address where nothing listens. */
const NOWHERE: WorldAddresses = { registry: '127.0.78.9', files: '127.0.78.9' };
const USER = 'proxyuser';
const PASSWORD = 'pr0xy-s3cret';

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

// Issue 38 item 5: in the simulated connected world where a CONNECT proxy on loopback is the only way to the publishers'
// names (inside the namespace they resolve to an address nothing answers on; the proxy, outside it, knows the servers).
describe('a corporate proxy is the only way out', () => {
  let world: ConnectedWorld;
  let proxy: ConnectProxy;
  let scratch: string;

  beforeAll(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-connected-proxy-'));
    world = await startConnectedWorld({ addresses: SERVED, namesResolveTo: NOWHERE });
    proxy = await startConnectProxy({
      authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`,
      resolve: (host, port) => {
        const address = worldAddressOf(host, SERVED);
        return address ? { host: address, port } : null;
      },
    });
  });
  afterAll(async () => {
    await proxy?.close();
    await world?.close();
    if (scratch) await fs.rm(scratch, { recursive: true, force: true });
  });

  async function cli(args: string[], name: string, extra: NodeJS.ProcessEnv = {}) {
    const dirs = { cache: path.join(scratch, name, 'cache'), home: path.join(scratch, name, 'home') };
    await fs.mkdir(dirs.cache, { recursive: true });
    await fs.mkdir(dirs.home, { recursive: true });
    const env = await world.env({ OCM_LAB_CACHE_DIR: dirs.cache, OCM_LAB_HOME: dirs.home, OCM_LAB_RUNTIME: 'local', ...extra });
    return { dirs, r: await world.run(process.execPath, [CLI, ...args], { env, timeout: 900_000 }) };
  }

  it('without the proxy the publishers do not answer: auto builds here (no Go: exit 3), nothing is fetched', async () => {
    const { dirs, r } = await cli(['setup', '--runtime', 'local', '--no-ocm'], 'direct');
    expect(r.all).toMatch(/artifacts: built here \([^)\n]*did not answer/);
    expect(r.exitCode, r.all).toBe(ExitCode.missingPrerequisite);
    expect(await filesUnder(path.join(dirs.cache, 'bin'))).toEqual([]);
  });

  it('with HTTPS_PROXY (credentials in it) setup takes Kubernetes and etcd through the proxy; the line says so, masked', async () => {
    proxy.seen.length = 0;
    const { dirs, r } = await cli(['setup', '--runtime', 'local', '--no-ocm'], 'through', {
      HTTPS_PROXY: `http://${USER}:${PASSWORD}@127.0.0.1:${proxy.port}`,
    });
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain(`via proxy http://***@127.0.0.1:${proxy.port}`);
    expect(r.all).not.toContain(PASSWORD);
    expect(r.all).not.toContain(USER);
    expect(proxy.seen).toEqual(expect.arrayContaining(['dl.k8s.io:443', 'github.com:443', 'quay.io:443']));
    for (const name of KUBERNETES_BINARIES) {
      const recipe = name === 'etcd' ? `etcd-${requireKubernetesRelease().etcd}` : `kubernetes-${KUBERNETES_VERSION}`;
      expect(await sha256File(path.join(dirs.cache, 'bin', recipe, name)), name).toBe(await sha256File(path.join(cacheDir(), 'bin', recipe, name)));
    }
  });

  it('a proxy that answers CONNECT with 403 stops setup with exit 9 naming it (masked) and the URL; nothing is fetched', async () => {
    const refusing = await startConnectProxy({ answer: 403 });
    try {
      const { dirs, r } = await cli(['setup', '--runtime', 'local', '--no-ocm'], 'refused', {
        https_proxy: `http://${USER}:${PASSWORD}@127.0.0.1:${refusing.port}`,
      });
      expect(r.exitCode, r.all).toBe(ExitCode.proxy);
      expect(r.all).toMatch(new RegExp(`proxy http://\\*\\*\\*@127\\.0\\.0\\.1:${refusing.port} \\(https_proxy\\) answered CONNECT \\S+:443 with HTTP 403`));
      expect(r.all).not.toContain(PASSWORD);
      expect(await filesUnder(path.join(dirs.cache, 'bin'))).toEqual([]);
    } finally {
      await refusing.close();
    }
  });
});
