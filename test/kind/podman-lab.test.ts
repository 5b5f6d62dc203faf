import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_VERSION } from '../../src/version.js';
import { REGISTRY_IMAGE } from '../../src/images/registry/index.js';
import { engineNamed } from '../../src/images/engine/index.js';
import { freePort } from '../support/connected-world/registry.js';
import { describeDefaultKindLab } from '../support/kind-lab-cases.js';
import { startPodmanEngine, type PodmanEngine } from '../support/podman-engine.js';

/**
 * The default lab on kind, on rootful Podman (kind's podman provider), with storage, networks and run state of the
 * test's own (test/support/podman-engine.ts), the same cases as on Docker (test/support/kind-lab-cases.ts). Nothing
 * names the engine or the runtime: no Docker engine answers, so auto takes Podman, and kind on it.
 */
let podman: PodmanEngine | undefined;
/**
 * kind's podman provider bind-mounts /lib/modules into every node and Podman refuses a missing source; this machine's
 * kernel comes with no /lib/modules. Where it is missing the file shows `up` refusing, then makes it empty (the fix the
 * refusal names) for the cases after; describeDefaultKindLab removes it at the end.
 */
const HOST_HAS_LIB_MODULES = existsSync('/lib/modules');

describeDefaultKindLab('podman', {
  start: async () => {
    podman = await startPodmanEngine();
    // Nothing chooses the runtime either.
    const env = { ...podman.env };
    delete env.OCM_LAB_RUNTIME;
    return { name: 'podman', env, stop: () => podman!.stop() };
  },
  upArgs: [],
  beforeUp: ({ ocmLab, engineCli }) => {
    it.skipIf(HOST_HAS_LIB_MODULES)('on a host without /lib/modules `up` stops before anything is made: exit 3, the line and how to make it', async () => {
      const up = await ocmLab(['up']);
      expect(up.exitCode, up.all).toBe(3);
      expect(up.stderr).toContain("this host has no /lib/modules, which kind's podman provider mounts into every node");
      expect(up.stderr).toContain('sudo mkdir -p /lib/modules');
      expect((await engineCli(['network', 'ls', '--format', '{{.Name}}'])).stdout.split('\n')).toEqual(['podman']);
      expect((await engineCli(['ps', '-a', '--format', '{{.Names}}'])).stdout).toBe('');
      await fs.mkdir('/lib/modules');
    });
  },
  engineLine: /engine: podman \d+\.\d+\.\d+ \(Podman answers; no Docker engine answers 'docker version'/,
  more: (stopEngine) => {
    it("refuses a podman older than kind's minimum before anything is made: exit 3, the version and what to do", async () => {
      const env = podman!.env;
      const real = (await execa('podman', ['version', '--format', '{{.Client.Version}}'], { env })).stdout.trim();
      // The machine's podman answering every version question as 1.7.0 (Debian has no podman that old).
      const bin = path.join(podman!.root, 'old-podman-bin');
      const labs = path.join(podman!.root, 'old-podman-labs');
      await fs.mkdir(bin);
      const said = `"Version": *"${real}"`;
      await fs.writeFile(
        path.join(bin, 'podman'),
        [
          '#!/usr/bin/env bash',
          'case "$1" in',
          `  version | info) /usr/bin/podman "$@" | sed 's/${said.replaceAll('.', '\\.')}/"Version": "1.7.0"/g'; exit "\${PIPESTATUS[0]}" ;;`,
          '  *) exec /usr/bin/podman "$@" ;;',
          'esac',
          '',
        ].join('\n'),
        { mode: 0o755 },
      );
      const shimmed = { ...env, PATH: `${bin}${path.delimiter}${env.PATH ?? ''}`, OCM_LAB_HOME: labs, OCM_LAB_NO_DOWNLOAD: '1', CI: 'true' };
      expect((await execa('podman', ['version', '--format', 'json'], { env: shimmed })).stdout).toContain('"Version": "1.7.0"');
      const up = await execa(process.execPath, [path.resolve('dist/cli/main.js'), 'up'], { env: shimmed, reject: false, timeout: 300_000 });
      expect(up.exitCode, `${up.stdout}\n${up.stderr}`).toBe(3);
      expect(up.stderr).toContain("podman 1.7.0 is older than kind's podman provider takes (1.8.0 or later)");
      expect(up.stderr).toContain('upgrade podman to 1.8.0 or later');
      expect(await fs.stat(path.join(labs, 'default')).catch(() => null)).toBeNull();
      expect((await execa('podman', ['network', 'ls', '--format', '{{.Name}}'], { env })).stdout.trim().split('\n')).toEqual(['podman']);
      expect((await execa('podman', ['ps', '-a', '--format', '{{.Names}}'], { env })).stdout.trim()).toBe('');
    });
    it('pushes our image for `--image-registry` through Podman: refused with what to do while the plain-HTTP registry is not marked insecure, pushed once it is', async () => {
      const env = podman!.env;
      const port = await freePort();
      const registry = `ocm-lab-test-user-registry-${port}`;
      const image = engineNamed('podman').storedImageRef(REGISTRY_IMAGE);
      await execa('podman', ['run', '-d', '--name', registry, '-p', `127.0.0.1:${port}:5000`, image], { env });
      try {
        // The function `up --runtime existing --image-registry` calls, from the built CLI's own module.
        const module = pathToFileURL(path.resolve('dist/images/user-registry.js')).href;
        const script =
          `import { pushOurImage } from ${JSON.stringify(module)};\n` +
          `try { console.log(await pushOurImage(process.argv[1], (line) => console.error(line))); }\n` +
          `catch (e) { console.error(e.message); console.error('hint: ' + e.hint); process.exit(e.exitCode ?? 1); }`;
        const push = (extra: NodeJS.ProcessEnv) =>
          execa(process.execPath, ['--input-type=module', '-e', script, `localhost:${port}`], { env: { ...env, ...extra }, reject: false, timeout: 600_000 });
        const conf = path.join(podman!.root, 'registries-user.conf');
        await fs.writeFile(conf, '');
        const refused = await push({ CONTAINERS_REGISTRIES_CONF: conf });
        expect(refused.exitCode, refused.stderr).toBe(3);
        expect(refused.stderr).toContain(`podman push localhost:${port}/ocm-lab:${PACKAGE_VERSION} failed`);
        expect(refused.stderr).toContain('a registry without TLS must be marked insecure in registries.conf for Podman');
        await fs.writeFile(conf, `[[registry]]\nlocation = "localhost:${port}"\ninsecure = true\n`);
        const pushed = await push({ CONTAINERS_REGISTRIES_CONF: conf });
        expect(pushed.exitCode, pushed.stderr).toBe(0);
        expect(pushed.stdout.trim()).toBe(`localhost:${port}/ocm-lab:${PACKAGE_VERSION}`);
        const tags = await fetch(`http://127.0.0.1:${port}/v2/ocm-lab/tags/list`);
        expect(await tags.json()).toEqual({ name: 'ocm-lab', tags: [PACKAGE_VERSION] });
      } finally {
        await execa('podman', ['rm', '-f', '-v', registry], { env, reject: false });
      }
    });
    it("leaves the machine as it found it: no storage or run state of the test, none of netavark's chains, no Podman bridge", async () => {
      await stopEngine();
      expect(await podman!.leftovers()).toEqual([]);
      const links = (await execa('ip', ['-o', 'link', 'show', 'type', 'bridge'])).stdout;
      expect(links).not.toMatch(/\bpodman\d+\b/);
    });
  },
});

/** A uid no account has: rootless Podman runs as it with a home of the test's own. */
const ROOTLESS_UID = 4242;

describe('rootless Podman on a cgroup v1 host', () => {
  let scratch: string;
  let run: (args: string[]) => Promise<{ exitCode: number; stdout: string; stderr: string }>;

  beforeAll(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-rootless-'));
    await fs.chmod(scratch, 0o755);
    const home = path.join(scratch, 'home');
    const runtimeDir = path.join(scratch, 'run');
    const bin = path.join(scratch, 'bin');
    for (const d of [home, runtimeDir, bin]) await fs.mkdir(d, { mode: 0o700 });
    await fs.chmod(bin, 0o755);
    for (const d of [home, runtimeDir]) await fs.chown(d, ROOTLESS_UID, ROOTLESS_UID);
    // This process's node may sit under root's home, which the uid cannot enter.
    await fs.copyFile(process.execPath, path.join(bin, 'node'));
    await fs.chmod(path.join(bin, 'node'), 0o755);
    const env = {
      PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}`,
      HOME: home,
      XDG_RUNTIME_DIR: runtimeDir,
      OCM_LAB_HOME: path.join(home, 'labs'),
      OCM_LAB_CACHE_DIR: path.join(home, 'cache'),
      OCM_LAB_NO_DOWNLOAD: '1',
      DOCKER_HOST: `unix://${scratch}/no-docker.sock`,
      CI: 'true',
    };
    run = async (args) => {
      const r = await execa('setpriv', ['--reuid', String(ROOTLESS_UID), '--regid', String(ROOTLESS_UID), '--clear-groups', ...args], {
        env,
        extendEnv: false,
        reject: false,
        cwd: scratch,
        timeout: 300_000,
      });
      return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
    };
  });

  afterAll(async () => {
    if (!scratch) return;
    await run(['podman', 'system', 'reset', '--force']).catch(() => undefined);
    // Rootless Podman leaves its pause process (catatonit) behind, as it does for any user.
    await execa('pkill', ['-KILL', '-u', String(ROOTLESS_UID)], { reject: false });
    await fs.rm(scratch, { recursive: true, force: true });
  });

  it('is refused before anything is made: exit 3, the line and what to do; no lab directory, no network, no container', async () => {
    const info = await run(['podman', 'info', '--format', '{{.Host.Security.Rootless}} {{.Host.CgroupsVersion}}']);
    expect(info.exitCode, info.stderr).toBe(0);
    // This machine's fact, not an assumption: the case is about a cgroup v1 host.
    expect(info.stdout.trim()).toBe('true v1');
    const up = await run(['node', path.resolve('dist/cli/main.js'), 'up', '--runtime', 'kind']);
    expect(up.exitCode, `${up.stdout}\n${up.stderr}`).toBe(3);
    expect(up.stderr).toContain("Podman runs rootless on a cgroup v1 host, and kind's podman provider runs rootless only on cgroup v2");
    expect(up.stderr).toMatch(/hint: run ocm-lab as root .*cgroup v2/);
    expect(await fs.stat(path.join(scratch, 'home', 'labs', 'default')).catch(() => null)).toBeNull();
    const networks = await run(['podman', 'network', 'ls', '--format', '{{.Name}}']);
    expect(networks.stdout.trim().split('\n')).toEqual(['podman']);
    const containers = await run(['podman', 'ps', '-a', '--format', '{{.Names}}']);
    expect(containers.stdout.trim()).toBe('');
  });
});
