import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OCM_LAB_IMAGE } from '../../src/images/catalogue.js';
import { run } from '../../src/util/exec.js';
import { ensureLabImages, labImages } from '../../src/images/lab-images.js';
import { startDockerEngine, type DockerEngine } from '../support/docker-engine.js';

/**
 * The lab's images built offline in a Docker engine of the test's own, from
 * the image cache (~/.cache/ocm-lab/kind/images) or from scratch: ocm-lab:<version>
 * runs the CLI (entry point and `ocm-lab` on PATH), OCM's run their binary as
 * 10001, a second ensure changes nothing, and `internal vpc-gateway` forwards
 * from one Docker network to a container on another. Needs root, Debian's
 * docker.io, the provisioned OCM binaries and a built dist/ (npm run build).
 */
const CONFIG = { ocmVersion: 'v1.2.1' };

describe('lab images on kind (ocm-lab:<version> and OCM)', () => {
  let engine: DockerEngine | undefined;
  const saved = process.env.DOCKER_HOST;
  const docker = (args: string[], allowFailure = false) => run('docker', args, { env: { ...process.env, DOCKER_HOST: engine?.host }, allowFailure });

  beforeAll(async () => {
    engine = await startDockerEngine();
    process.env.DOCKER_HOST = engine.host; // src/images/docker.ts runs the docker CLI with this environment
  });
  afterAll(async () => {
    if (saved === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = saved;
    await engine?.stop();
  });

  it('builds or loads every image, and a second ensure is a no-op', async () => {
    const lines: string[] = [];
    expect(await ensureLabImages(CONFIG, { onProgress: (l) => lines.push(l) })).toEqual(labImages(CONFIG));
    for (const ref of labImages(CONFIG)) expect((await docker(['image', 'inspect', '-f', '{{.Id}}', ref])).stdout).toMatch(/^sha256:/);
    const started = Date.now();
    const again: string[] = [];
    await ensureLabImages(CONFIG, { onProgress: (l) => again.push(l) });
    expect(again).toEqual([]);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('ocm-lab:<version> runs the CLI as its entry point and as `ocm-lab` on PATH', async () => {
    const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
    expect((await docker(['run', '--rm', '--network', 'none', OCM_LAB_IMAGE, '--version'])).stdout.trim()).toBe(version);
    expect((await docker(['run', '--rm', '--network', 'none', '--entrypoint', 'ocm-lab', OCM_LAB_IMAGE, '--version'])).stdout.trim()).toBe(version);
  });

  it("OCM's images hold their binary at /<name> and run as user 10001", async () => {
    const ref = 'quay.io/open-cluster-management/registration:v1.2.1';
    expect((await docker(['run', '--rm', '--network', 'none', ref, '/registration', '--version'])).stdout).toContain('v1.2.1');
    expect((await docker(['run', '--rm', '--network', 'none', '--entrypoint', 'id', ref, '-u'])).stdout.trim()).toBe('10001');
  });

  it('internal vpc-gateway forwards from another network to the target, resets when it is down, stops on SIGTERM', async () => {
    const names = { a: 'ocm-lab-e2e-vpc-a', b: 'ocm-lab-e2e-vpc-b', target: 'ocm-lab-e2e-target', gw: 'ocm-lab-e2e-gw' };
    try {
      await docker(['network', 'create', names.a]);
      await docker(['network', 'create', names.b]);
      await docker([
        'run',
        '-d',
        '--name',
        names.target,
        '--network',
        names.a,
        '--entrypoint',
        'node',
        OCM_LAB_IMAGE,
        '-e',
        'require("net").createServer((s) => s.end("hello from the hub\\n")).listen(6443)',
      ]);
      await docker([
        'create',
        '--name',
        names.gw,
        '--network',
        names.a,
        '--entrypoint',
        'ocm-lab',
        OCM_LAB_IMAGE,
        'internal',
        'vpc-gateway',
        '--forward',
        `6443=${names.target}:6443`,
        '--forward',
        `8091=${names.target}:8091`,
      ]);
      await docker(['network', 'connect', names.b, names.gw]);
      await docker(['start', names.gw]);
      const client = (port: number, host: string) =>
        docker([
          'run',
          '--rm',
          '--network',
          names.b,
          '--entrypoint',
          'node',
          OCM_LAB_IMAGE,
          '-e',
          `const s = require("net").connect({ port: ${port}, host: "${host}" }); let got = ""; s.on("data", (d) => (got += d)); s.on("error", (e) => console.log("error " + e.code)); s.on("close", () => console.log("got " + JSON.stringify(got)));`,
        ]);
      let out = '';
      for (let i = 0; i < 20 && !out.includes('hello'); i++) {
        out = (await client(6443, names.gw)).stdout;
        if (!out.includes('hello')) await new Promise((r) => setTimeout(r, 250));
      }
      expect(out).toContain('got "hello from the hub\\n"');
      expect((await client(8091, names.gw)).stdout).toMatch(/error ECONNRESET|got ""/);
      // The target's network is not the client's: only the gateway joins them.
      expect((await client(6443, names.target)).stdout).toContain('error ENOTFOUND');
      await docker(['stop', '-t', '10', names.gw]);
      expect((await docker(['inspect', '-f', '{{.State.ExitCode}}', names.gw])).stdout.trim()).toBe('0');
      expect((await docker(['logs', names.gw])).stderr).toMatch(/8091 -> ocm-lab-e2e-target:8091 from .*: connect: ECONNREFUSED/);
    } finally {
      await docker(['rm', '-f', names.gw, names.target], true);
      await docker(['network', 'rm', names.a, names.b], true);
    }
  });
});
