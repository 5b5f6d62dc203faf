import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode, LabError } from '../../src/errors.js';
import { chooseArtifacts, decideArtifacts, httpProber, probeUrl, provisionMode, type Prober } from '../../src/provision/artifacts.js';
import { NO_MIRRORS } from '../../src/provision/mirrors.js';
import { runtimeDefinition } from '../../src/runtime/registry.js';

/** What each runtime's definition says its labs fetch from (was provision/artifacts.ts's officialSources(runtime)). */
const sourcesOf = async (runtime: string) => (await runtimeDefinition(runtime)).officialSources;

describe('artifacts: the choice', () => {
  it('takes the flag over the environment over the lab file over auto', () => {
    const env = { OCM_LAB_ARTIFACTS: 'official' };
    expect(chooseArtifacts({ flag: 'build', env, labFile: 'auto' })).toEqual({ mode: 'build', origin: '--artifacts build' });
    expect(chooseArtifacts({ env, labFile: 'build' })).toEqual({ mode: 'official', origin: 'OCM_LAB_ARTIFACTS=official' });
    expect(chooseArtifacts({ env: {}, labFile: 'build' })).toEqual({ mode: 'build', origin: 'artifacts: build in the lab file' });
    expect(chooseArtifacts({ env: {} })).toEqual({ mode: 'auto', origin: 'default' });
  });

  it('keeps --download/--no-download and OCM_LAB_NO_DOWNLOAD=1 as aliases of auto and build, each at its level', () => {
    expect(chooseArtifacts({ download: false, env: {} })).toEqual({ mode: 'build', origin: '--no-download' });
    expect(chooseArtifacts({ download: true, env: { OCM_LAB_NO_DOWNLOAD: '1' } })).toEqual({ mode: 'auto', origin: '--download' });
    expect(chooseArtifacts({ env: { OCM_LAB_NO_DOWNLOAD: '1' }, labFile: 'official' })).toEqual({ mode: 'build', origin: 'OCM_LAB_NO_DOWNLOAD=1' });
    expect(chooseArtifacts({ env: { OCM_LAB_NO_DOWNLOAD: '1', OCM_LAB_ARTIFACTS: 'auto' } }).mode).toBe('auto');
    expect(chooseArtifacts({ flag: 'official', download: false, env: {} }).mode).toBe('official');
  });

  it('refuses an unknown mode naming where it came from (exit 2)', () => {
    const bad = (() => {
      try {
        chooseArtifacts({ env: { OCM_LAB_ARTIFACTS: 'fast' } });
      } catch (err) {
        return err as LabError;
      }
      return null;
    })();
    expect(bad?.exitCode).toBe(ExitCode.invalidInput);
    expect(bad?.message).toBe('OCM_LAB_ARTIFACTS=fast: not a choice; use one of official, build, auto');
    expect(() => chooseArtifacts({ flag: 'x', env: {} })).toThrow('--artifacts x: not a choice');
  });
});

describe('artifacts: the decision', () => {
  const asked: string[] = [];
  const answering: Prober = async (url) => {
    asked.push(url);
    return undefined;
  };
  const silent =
    (down: string[], why = 'ENOTFOUND'): Prober =>
    async (url) =>
      down.some((h) => url.includes(h)) ? why : undefined;

  it('asks nobody under build and says why', async () => {
    asked.length = 0;
    const d = await decideArtifacts(
      { mode: 'build', origin: '--artifacts build' },
      { sources: await sourcesOf('local'), mirrors: NO_MIRRORS, prober: answering },
    );
    expect(asked).toEqual([]);
    expect(d.line).toBe('artifacts: built here (--artifacts build)');
    expect(provisionMode(d)).toBe('build');
  });

  it('goes official under auto when every publisher the runtime needs answers', async () => {
    asked.length = 0;
    const d = await decideArtifacts({ mode: 'auto', origin: 'default' }, { sources: await sourcesOf('kind'), mirrors: NO_MIRRORS, prober: answering });
    expect(asked.sort()).toEqual(['https://dl.k8s.io/release/', 'https://github.com/', 'https://quay.io/v2/', 'https://registry-1.docker.io/v2/']);
    expect(d.line).toBe('artifacts: official (registries answered)');
    expect(provisionMode(d)).toBe('auto');
  });

  it('builds under auto when a publisher is silent, naming it and why', async () => {
    const one = await decideArtifacts(
      { mode: 'auto', origin: 'default' },
      { sources: await sourcesOf('local'), mirrors: NO_MIRRORS, prober: silent(['quay.io'], 'no answer within 3 s') },
    );
    expect(one.line).toBe('artifacts: built here (quay.io did not answer: no answer within 3 s)');
    expect(provisionMode(one)).toBe('build');
    const all = await decideArtifacts(
      { mode: 'auto', origin: 'default' },
      { sources: await sourcesOf('local'), mirrors: NO_MIRRORS, prober: silent(['dl.k8s.io', 'github', 'quay']) },
    );
    expect(all.line).toBe('artifacts: built here (dl.k8s.io, github.com, quay.io did not answer: ENOTFOUND)');
  });

  it('stops under official with the silent hosts and what to do (exit 3)', async () => {
    const err = (await decideArtifacts(
      { mode: 'official', origin: 'OCM_LAB_ARTIFACTS=official' },
      { sources: await sourcesOf('local'), mirrors: NO_MIRRORS, prober: silent(['quay.io']) },
    ).catch((e: unknown) => e)) as LabError;
    expect(err.exitCode).toBe(ExitCode.missingPrerequisite);
    expect(err.message).toBe('OCM_LAB_ARTIFACTS=official: quay.io did not answer (https://quay.io/v2/: ENOTFOUND)');
    expect(err.hint).toContain('--artifacts build');
    expect(err.hint).toContain('--mirrors FILE');
  });

  it('probes through the mirrors', async () => {
    const mirrors = { registries: { 'quay.io': 'https://m.example:5000' }, downloads: { 'https://dl.k8s.io': 'https://m.example/k8s' }, digests: {} };
    expect((await sourcesOf('existing')).map((s) => probeUrl(s, mirrors))).toEqual(['https://m.example/k8s/release/', 'https://m.example:5000/v2/']);
  });
});

describe('artifacts: the HTTP probe', () => {
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => res.writeHead(req.url === '/broken/' ? 503 : req.url === '/v2/' ? 401 : 404).end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it('counts any answer below 500 (a registry says 401 without credentials), not a 5xx or a closed port', async () => {
    expect(await httpProber(`${base}/v2/`, 2000)).toBeUndefined();
    expect(await httpProber(`${base}/missing/`, 2000)).toBeUndefined();
    expect(await httpProber(`${base}/broken/`, 2000)).toBe('HTTP 503');
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    expect(await httpProber(`http://127.0.0.1:${port}/v2/`, 2000)).toBe('ECONNREFUSED');
  });
});
