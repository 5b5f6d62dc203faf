import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OCM_LAB_IMAGE } from '../../src/images/catalogue.js';
import { ImageCatalog } from '../../src/nodelet/images.js';
import { ociConfig, realHostView, SHARED_HOST_DIRS, writeBundle, writePodEtcFiles, type BundleInput } from '../../src/nodelet/oci/bundle.js';
import { cleanupContainers, listContainers, runcAt, RuncContainer, type ExecProcess, type LogSink } from '../../src/nodelet/oci/runc.js';
import { run } from '../../src/util/exec.js';

/**
 * Real runc containers from bundles the nodelet's writer makes: volumes at
 * their mountPaths, working directory, env, user, the pod's network
 * namespace, exit codes, SIGTERM/SIGKILL, exec with and without a terminal,
 * and the removal of containers a killed nodelet left. Needs root and runc.
 */
const NETNS = `ocmlab-e2e-oci-${process.pid}`;
let dir: string;
const runc = () => runcAt(path.join(dir, 'runc'));
let seq = 0;

function collect(): LogSink & { text(): string } {
  let out = '';
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (out += c.toString()));
  return { stdout, stderr, text: () => out };
}

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function readAll(p: ExecProcess): Promise<{ out: string; err: string; code: number }> {
  let out = '';
  let err = '';
  p.stdout.on('data', (c: Buffer) => (out += c.toString()));
  p.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  const { exitCode: code } = await p.exited;
  await new Promise((r) => setTimeout(r, 50));
  return { out, err, code };
}

/** A pod directory with a read-only "secret" volume (0600, owned by the container user) and a writable emptyDir. */
async function podDir(uid: number): Promise<{ root: string; secret: string; scratch: string }> {
  const root = path.join(dir, `pod-${++seq}`);
  const secret = path.join(root, 'volumes', 'sa');
  const scratch = path.join(root, 'volumes', 'scratch');
  await fs.mkdir(secret, { recursive: true });
  await fs.mkdir(scratch, { recursive: true });
  await fs.chmod(scratch, 0o777);
  await fs.writeFile(path.join(secret, 'token'), 'the-token', { mode: 0o600 });
  await fs.chown(path.join(secret, 'token'), uid, 0);
  await fs.writeFile(path.join(secret, 'namespace'), 'team', { mode: 0o644 });
  await fs.writeFile(path.join(secret, 'ca.crt'), '', { mode: 0o644 });
  return { root, secret, scratch };
}

async function start(
  args: string[],
  over: Partial<BundleInput> = {},
  uid = 0,
): Promise<{ c: RuncContainer; log: ReturnType<typeof collect>; pod: string; scratch: string }> {
  const pod = await podDir(uid);
  const id = `e2e-oci-${process.pid}-${seq}`;
  const etc = await writePodEtcFiles(path.join(pod.root, 'etc'), 'web-0', '10.99.0.7');
  const config = ociConfig({
    hostname: 'web-0',
    args,
    env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', GREETING: 'hello from env' },
    cwd: '/srv/app',
    user: { uid, gid: 0 },
    hostDirs: SHARED_HOST_DIRS.filter((d) => existsSync(d)),
    etcFiles: etc,
    imageFiles: [],
    volumes: [
      { source: pod.secret, destination: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
      { source: pod.scratch, destination: '/data', readOnly: false },
    ],
    netnsPath: `/var/run/netns/${NETNS}`,
    cgroupsPath: `/${id}`,
    ...over,
  });
  const bundle = path.join(pod.root, 'containers', 'main');
  await writeBundle(bundle, config);
  const log = collect();
  const c = await RuncContainer.start({ runc: runc(), id, bundle, sink: log });
  return { c, log, pod: pod.root, scratch: pod.scratch };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('containers under runc', () => {
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'e2e-oci-'));
    await run('ip', ['netns', 'add', NETNS]);
    await run('ip', ['-n', NETNS, 'link', 'set', 'lo', 'up']);
  });

  afterAll(async () => {
    await cleanupContainers(runc()).catch(() => undefined);
    await run('ip', ['netns', 'del', NETNS]).catch(() => undefined);
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('sees its volumes at their mountPaths, its working directory, env, hostname, hosts file and the pod netns; exits with its status', async () => {
    const script = [
      'cat /var/run/secrets/kubernetes.io/serviceaccount/token; echo',
      'pwd',
      'echo "$GREETING"',
      'hostname',
      'grep web-0 /etc/hosts',
      'id -u',
      'readlink /proc/self/ns/net',
      'echo written > /data/out.txt',
      'touch /var/run/secrets/kubernetes.io/serviceaccount/x 2>/dev/null || echo read-only volume',
      'touch /usr/x 2>/dev/null || echo read-only usr',
      'echo scratch > /tmp/s && cat /tmp/s',
      'wc -c < /etc/shadow',
      'exit 7',
    ].join('; ');
    const { c, log, scratch } = await start(['/bin/sh', '-c', script], {}, 10001);
    const exit = await c.exited;
    expect(exit.exitCode, log.text()).toBe(7);
    const netnsInode = (await fs.stat(`/var/run/netns/${NETNS}`)).ino;
    expect(log.text().split('\n')).toEqual([
      'the-token',
      '/srv/app',
      'hello from env',
      'web-0',
      '10.99.0.7\tweb-0',
      '10001',
      `net:[${netnsInode}]`,
      'read-only volume',
      'read-only usr',
      'scratch',
      '0',
      '',
    ]);
    expect(await fs.readFile(path.join(scratch, 'out.txt'), 'utf8')).toBe('written\n');
    expect(await listContainers(runc())).toEqual([]);
  });

  it('mounts a volume where the host has no such path inside a shared directory (/etc/hub), leaving the host untouched', async () => {
    const hub = path.join(dir, 'hub-volume');
    await fs.mkdir(hub, { recursive: true });
    await fs.writeFile(path.join(hub, 'kubeconfig'), 'hub kubeconfig');
    expect(existsSync('/etc/hub-e2e-oci')).toBe(false);
    const script = [
      'cat /etc/hub-e2e-oci/kubeconfig; echo',
      'grep -c "^root:" /etc/passwd',
      'cat /etc/hostname',
      'touch /etc/x 2>/dev/null || echo read-only etc',
      'ls /usr/bin/env',
    ].join('; ');
    const { c, log } = await start(['/bin/sh', '-c', script], {
      hostView: realHostView(),
      volumes: [{ source: hub, destination: '/etc/hub-e2e-oci', readOnly: true }],
    });
    expect((await c.exited).exitCode, log.text()).toBe(0);
    expect(log.text()).toBe('hub kubeconfig\n1\nweb-0\nread-only etc\n/usr/bin/env\n');
    expect(existsSync('/etc/hub-e2e-oci')).toBe(false);
  });

  it('runs the ocm-lab image: node and the CLI from the package root mounted at its own path', async () => {
    const cliMain = path.resolve('dist/cli/main.js');
    const image = new ImageCatalog({ ocmVersion: 'v0', binaries: {}, cli: { nodeBinary: process.execPath, cliMain, packageRoot: path.resolve('.') } }).resolve(
      OCM_LAB_IMAGE,
    )!;
    const token = '/var/run/secrets/kubernetes.io/serviceaccount/token';
    const { c, log } = await start(
      [...image.entrypoint, 'internal', 'test-workload', '--print-file', token, '--print-env', 'GREETING', '--exit-after', '1ms', '--exit-code', '0'],
      {
        imageFiles: image.files,
        cwd: '/',
      },
    );
    expect((await c.exited).exitCode, log.text()).toBe(0);
    expect(log.text()).toContain(`FILE ${token}: the-token`);
    expect(log.text()).toContain('ENV GREETING=hello from env');
  });

  it('runs an upstream OCM image unchanged: its binary at /registration-operator as user 10001, in-cluster config from the real paths', async () => {
    const binary = path.join(os.homedir(), '.cache', 'ocm-lab', 'bin', 'ocm-v1.2.1', 'registration-operator');
    if (!existsSync(binary)) return; // provisioning has not built it on this machine
    const ref = 'quay.io/open-cluster-management/registration-operator:v1.2.1';
    const image = new ImageCatalog({
      ocmVersion: 'v1.2.1',
      binaries: { 'registration-operator': binary },
      cli: { nodeBinary: '', cliMain: '', packageRoot: '' },
    }).resolve(ref)!;
    // The Deployment's args, with the API server on a port of the pod's own loopback where nothing listens.
    const { c, log } = await start(
      ['/registration-operator', 'klusterlet'],
      {
        imageFiles: image.files,
        cwd: '/',
        env: { PATH: '/usr/bin:/bin', KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: '6443', POD_NAME: 'klusterlet-0' },
      },
      image.user.uid,
    );
    await until('an API call', () => /127\.0\.0\.1:6443|connection refused/.test(log.text()), 20_000).catch(() => undefined);
    await c.terminate(2_000);
    expect(log.text()).toMatch(/127\.0\.0\.1:6443/);
    expect(log.text()).not.toMatch(/no such file|must be defined|permission denied/);
  });

  it('stops on SIGTERM when the process handles it, and is killed after the grace period when it does not', async () => {
    const polite = await start(['/bin/sh', '-c', 'trap "echo got TERM; exit 143" TERM; echo ready; while :; do sleep 0.05; done']);
    await until('ready', () => polite.log.text().includes('ready'));
    const t0 = Date.now();
    expect(await polite.c.terminate(10_000)).toMatchObject({ exitCode: 143, signal: 15 });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(polite.log.text()).toContain('got TERM');

    const stubborn = await start(['/bin/sh', '-c', 'trap "" TERM; echo ready; while :; do sleep 0.05; done']);
    await until('ready', () => stubborn.log.text().includes('ready'));
    expect(await stubborn.c.terminate(300)).toMatchObject({ exitCode: 137, signal: 9 });
    expect(alive(stubborn.c.pid)).toBe(false);
  });

  it('execs commands in the running container, with pipes or a terminal, returning their exit codes', async () => {
    const { c } = await start(['/bin/sh', '-c', 'trap "exit 0" TERM; while :; do sleep 0.05; done']);
    try {
      const plain = await readAll(c.exec(['/bin/sh', '-c', 'cat /var/run/secrets/kubernetes.io/serviceaccount/token; echo; pwd; echo oops >&2; exit 3']));
      expect(plain).toEqual({ out: 'the-token\n/srv/app\n', err: 'oops\n', code: 3 });

      const withInput = c.exec(['/bin/cat'], { stdin: true });
      const echoed = readAll(withInput);
      withInput.stdin?.end('piped input\n');
      // Without stdin the command reads end-of-file at once.
      expect(await readAll(c.exec(['/bin/cat']))).toEqual({ out: '', err: '', code: 0 });
      expect(await echoed).toEqual({ out: 'piped input\n', err: '', code: 0 });

      // runc sizes the container's terminal just after the process starts: look a moment later.
      const tty = c.exec(['/bin/sh', '-c', 'tty; sleep 0.3; stty size; exit 5'], { tty: true, size: { cols: 100, rows: 30 } });
      const t = await readAll(tty);
      expect(t.code).toBe(5);
      // The first line may carry an extra CR: runc configures the container's terminal while the process already runs.
      expect(t.out).toMatch(/^\/dev\/pts\/\d+\r+\n30 100\r\n$/);

      const interactive = c.exec(['/bin/sh'], { tty: true, stdin: true, size: { cols: 80, rows: 24 } });
      const session = readAll(interactive);
      await new Promise((r) => setTimeout(r, 300));
      interactive.resize(120, 40);
      await new Promise((r) => setTimeout(r, 300));
      interactive.stdin?.write('stty size; exit 4\n');
      const s = await session;
      expect(s.code).toBe(4);
      expect(s.out).toContain('40 120');

      // kill() ends the command inside the container, not only runc exec.
      const sleeper = c.exec(['/bin/sh', '-c', 'echo started; exec sleep 1234']);
      const slept = readAll(sleeper);
      await new Promise((r) => setTimeout(r, 300));
      sleeper.kill();
      expect((await slept).code).toBe(137);
      await until('the exec-ed command to go', async () => !(await run('ps', ['-eo', 'args'])).stdout.includes('sleep 1234'));

      const missing = await readAll(c.exec(['/no/such/program']));
      expect(missing.code).not.toBe(0);
    } finally {
      await c.terminate(2_000);
    }
  });

  it('a container adopted by a later nodelet keeps its start time, to the millisecond', async () => {
    const { c, pod } = await start(['/bin/sh', '-c', 'while :; do sleep 0.05; done']);
    const adopted = await RuncContainer.adopt(runc(), c.id, path.join(pod, 'containers', 'main'), collect());
    expect(adopted?.pid).toBe(c.pid);
    expect(adopted?.startedAt.toISOString()).toBe(c.startedAt.toISOString());
    await c.terminate(0);
    await adopted?.exited;
  });

  it('reports a container that cannot start with runc’s reason', async () => {
    const err = await start(['/no/such/program']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/no such file or directory|not found/);
    expect(await listContainers(runc())).toEqual([]);
  });

  it('cleanupContainers removes containers a killed nodelet left: no runc state, no process', async () => {
    const pod = await podDir(0);
    const id = `e2e-oci-${process.pid}-leftover`;
    const etc = await writePodEtcFiles(path.join(pod.root, 'etc'), 'left', undefined);
    const bundle = path.join(pod.root, 'containers', 'main');
    await writeBundle(
      bundle,
      ociConfig({
        hostname: 'left',
        args: ['/bin/sh', '-c', 'trap "" TERM; while :; do sleep 0.05; done'],
        env: { PATH: '/usr/bin:/bin' },
        cwd: '/',
        user: { uid: 0, gid: 0 },
        hostDirs: SHARED_HOST_DIRS.filter((d) => existsSync(d)),
        etcFiles: etc,
        imageFiles: [],
        volumes: [],
        netnsPath: `/var/run/netns/${NETNS}`,
        cgroupsPath: `/${id}`,
      }),
    );
    // A "nodelet" of its own that starts the container and is then killed with SIGKILL.
    const pidFile = path.join(bundle, 'leftover.pid');
    const nodelet = spawn(
      '/bin/sh',
      ['-c', `runc --root ${runc().root} run --bundle ${bundle} --pid-file ${pidFile} ${id} >/dev/null 2>&1 </dev/null & wait`],
      {
        stdio: 'ignore',
        detached: true,
      },
    );
    await until('the leftover container', async () => (await fs.readFile(pidFile, 'utf8').catch(() => '')).trim() !== '');
    const initPid = Number((await fs.readFile(pidFile, 'utf8')).trim());
    process.kill(-(nodelet.pid as number), 'SIGKILL');
    // The container outlives its parent.
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(initPid)).toBe(true);
    expect((await listContainers(runc())).map((s) => s.id)).toContain(id);

    expect(await cleanupContainers(runc(), (i) => i === id)).toEqual([id]);
    await until('the init process to go', () => !alive(initPid));
    expect(await listContainers(runc())).toEqual([]);
    const left = (await run('ps', ['-eo', 'args'])).stdout.split('\n').filter((l) => l.includes(id));
    expect(left).toEqual([]);
    // runc removed the container's cgroup in every controller.
    const controllers = await fs.readdir('/sys/fs/cgroup');
    expect(controllers.filter((ctrl) => existsSync(path.join('/sys/fs/cgroup', ctrl, id)))).toEqual([]);
  });
});
