/**
 * The kubelet API behind a real kube-apiserver, driven by the real kubectl
 * (kubectl → websocket → kube-apiserver → SPDY → us), all on loopback, with the
 * provisioned etcd, kube-apiserver and kubectl.
 *
 * The backend is a small fake (commands run with /bin/sh on the host, "pod ports" are
 * loopback ports); the full pod path is the lab's e2e.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeletServer, type ExecProcess, type KubeletBackend, type KubeletServer } from '../../src/nodelet/kubelet-api/index.js';
import { createCA, createServiceAccountKeyPair, issueCertificate } from '../../src/pki/index.js';
import { ensureBinaries } from '../../src/provision/index.js';

const execFileP = promisify(execFile);
// Resolved in beforeAll through the project's own provisioning (the cache CI fills).
let KUBECTL = '';
let ETCD_BIN = '';
let API_SERVER_BIN = '';

async function freePort(): Promise<number> {
  const s = net.createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

const resizes: [number, number][] = [];

function hostBackend(pod: object, logLines: string[]): KubeletBackend {
  return {
    pods: () => [pod],
    streamLogs: async (_ns, _pod, _c, opts, out, signal) => {
      for (const l of logLines) out.write(`${l}\n`);
      if (!opts.follow) return;
      let n = logLines.length + 1;
      await new Promise<void>((resolve) => {
        const timer = setInterval(() => out.write(`line ${n++}\n`), 100);
        signal.addEventListener('abort', () => {
          clearInterval(timer);
          resolve();
        });
      });
    },
    exec: async (_ns, _pod, _c, command, opts): Promise<ExecProcess> => {
      const child = spawn(command[0]!, command.slice(1), { stdio: [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
      return {
        stdin: child.stdin,
        stdout: child.stdout!,
        stderr: opts.tty ? null : child.stderr!,
        kill: () => child.kill('SIGKILL'),
        resize: (cols, rows) => resizes.push([cols, rows]),
        exited: new Promise((resolve) => child.on('exit', (code) => resolve({ exitCode: code ?? 137 }))),
      };
    },
    dialPort: (_ns, _pod, port) =>
      new Promise((resolve, reject) => {
        const s = net.connect(port, '127.0.0.1');
        s.once('connect', () => resolve(s));
        s.once('error', reject);
      }),
  };
}

describe('kubelet API behind a real kube-apiserver', () => {
  const procs: ChildProcess[] = [];
  let dir: string;
  let kubelet: KubeletServer | undefined;
  let kubeconfig: string;
  let echo: net.Server | undefined;
  let echoPort: number;
  let apiLog = '';
  const kubectl = (...args: string[]) => execFileP(KUBECTL, ['--kubeconfig', kubeconfig, ...args], { timeout: 60_000 });

  beforeAll(async () => {
    const bins = await ensureBinaries(['kubectl', 'etcd', 'kube-apiserver']);
    [KUBECTL, ETCD_BIN, API_SERVER_BIN] = [bins.kubectl, bins.etcd, bins['kube-apiserver']];
    dir = mkdtempSync(path.join(os.tmpdir(), 'kubelet-api-apiserver-'));
    const file = (name: string, content: string): string => {
      writeFileSync(path.join(dir, name), content, { mode: 0o600 });
      return path.join(dir, name);
    };
    const ca = await createCA('kubelet-api-apiserver-test');
    const caFile = file('ca.crt', ca.certPem);
    const apiServing = await issueCertificate(ca, { commonName: 'kube-apiserver', ipAddresses: ['127.0.0.1'], usages: ['server'] });
    const kubeletClient = await issueCertificate(ca, {
      commonName: 'kube-apiserver-kubelet-client',
      organizations: ['kubeadm:cluster-admins'],
      usages: ['client'],
    });
    const admin = await issueCertificate(ca, { commonName: 'admin', organizations: ['system:masters'], usages: ['client'] });
    const nodeServing = await issueCertificate(ca, { commonName: 'system:node:node-1', ipAddresses: ['127.0.0.1'], usages: ['server'] });
    const sa = await createServiceAccountKeyPair();
    const [etcdClient, etcdPeer, apiPort] = [await freePort(), await freePort(), await freePort()];

    procs.push(
      spawn(
        ETCD_BIN,
        [
          '--data-dir',
          path.join(dir, 'etcd'),
          '--listen-client-urls',
          `http://127.0.0.1:${etcdClient}`,
          '--advertise-client-urls',
          `http://127.0.0.1:${etcdClient}`,
          '--listen-peer-urls',
          `http://127.0.0.1:${etcdPeer}`,
          '--initial-advertise-peer-urls',
          `http://127.0.0.1:${etcdPeer}`,
          '--initial-cluster',
          `default=http://127.0.0.1:${etcdPeer}`,
        ],
        { stdio: 'ignore' },
      ),
    );
    const api = spawn(
      API_SERVER_BIN,
      [
        `--etcd-servers=http://127.0.0.1:${etcdClient}`,
        `--secure-port=${apiPort}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        '--endpoint-reconciler-type=none',
        `--tls-cert-file=${file('api.crt', apiServing.certPem)}`,
        `--tls-private-key-file=${file('api.key', apiServing.keyPem)}`,
        `--client-ca-file=${caFile}`,
        `--kubelet-client-certificate=${file('kc.crt', kubeletClient.certPem)}`,
        `--kubelet-client-key=${file('kc.key', kubeletClient.keyPem)}`,
        `--kubelet-certificate-authority=${caFile}`,
        '--kubelet-preferred-address-types=InternalIP',
        '--authorization-mode=Node,RBAC',
        '--service-cluster-ip-range=10.96.0.0/16',
        '--disable-admission-plugins=ServiceAccount',
        `--service-account-issuer=https://127.0.0.1:${apiPort}`,
        `--service-account-key-file=${file('sa.pub', sa.publicKeyPem)}`,
        `--service-account-signing-key-file=${file('sa.key', sa.privateKeyPem)}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    api.stderr!.on('data', (c: Buffer) => (apiLog = (apiLog + c.toString()).slice(-20_000)));
    procs.push(api);
    kubeconfig = file(
      'kubeconfig',
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'c',
        clusters: [{ name: 'c', cluster: { server: `https://127.0.0.1:${apiPort}`, 'certificate-authority': caFile } }],
        users: [{ name: 'u', user: { 'client-certificate': file('admin.crt', admin.certPem), 'client-key': file('admin.key', admin.keyPem) } }],
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
      }),
    );
    for (let attempt = 0; ; attempt++) {
      try {
        await kubectl('get', '--raw', '/readyz');
        break;
      } catch {
        if (attempt > 120) throw new Error(`kube-apiserver did not become ready; its last output:\n${apiLog}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }

    echo = net.createServer((s) => s.pipe(s)).listen(0, '127.0.0.1');
    await once(echo, 'listening');
    echoPort = (echo.address() as net.AddressInfo).port;
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: 'default', name: 'web' },
      spec: { nodeName: 'node-1', containers: [{ name: 'app', image: 'busybox' }] },
    };
    kubelet = await startKubeletServer({
      address: '127.0.0.1',
      port: 0,
      certPem: nodeServing.certPem,
      keyPem: nodeServing.keyPem,
      clientCaPem: ca.certPem,
      backend: hostBackend(pod, ['line 1', 'line 2']),
    });
    await kubectl('create', '-f', file('node.json', JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } })));
    // A Hostname that resolves nowhere first: the API server must pick the InternalIP.
    await kubectl(
      'patch',
      'node',
      'node-1',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          addresses: [
            { type: 'Hostname', address: 'node-1.invalid' },
            { type: 'InternalIP', address: '127.0.0.1' },
          ],
          daemonEndpoints: { kubeletEndpoint: { Port: kubelet.port } },
        },
      }),
    );
    await kubectl('create', '-f', file('pod.json', JSON.stringify(pod)));
    await kubectl('patch', 'pod', 'web', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Running"}}');
  }, 300_000);

  afterAll(async () => {
    await kubelet?.close();
    echo?.close();
    for (const p of [...procs].reverse()) p.kill('SIGTERM');
    await Promise.race([Promise.all(procs.map((p) => (p.exitCode === null ? once(p, 'exit') : undefined))), new Promise((r) => setTimeout(r, 5000))]);
    for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('kubectl logs with --tail, --timestamps and --since', async () => {
    expect((await kubectl('logs', 'web', '--tail=5', '--timestamps', '--since=1h')).stdout).toBe('line 1\nline 2\n');
  });

  it('kubectl logs -f streams new lines', async () => {
    const p = spawn(KUBECTL, ['--kubeconfig', kubeconfig, 'logs', '-f', 'web']);
    let out = '';
    p.stdout.on('data', (c: Buffer) => (out += c.toString()));
    try {
      await expect.poll(() => out, { timeout: 15_000 }).toContain('line 4\n');
    } finally {
      p.kill();
    }
  });

  it('kubectl exec returns output and exit codes, with and without stdin', async () => {
    const ok = await kubectl('exec', 'web', '--', 'sh', '-c', 'echo out; echo err >&2');
    expect(ok.stdout).toBe('out\n');
    expect(ok.stderr).toContain('err');
    const failed = (await kubectl('exec', 'web', '--', 'sh', '-c', 'exit 5').catch((e: unknown) => e)) as { code: number };
    expect(failed.code).toBe(5);
    const p = spawn(KUBECTL, ['--kubeconfig', kubeconfig, 'exec', '-i', 'web', '--', 'sh', '-c', 'cat; echo end']);
    let out = '';
    p.stdout.on('data', (c: Buffer) => (out += c.toString()));
    p.stdin.end('piped\n');
    const [code] = await once(p, 'exit');
    expect(out).toBe('piped\nend\n');
    expect(code).toBe(0);
  });

  it('kubectl exec -it passes the terminal size', async () => {
    // script(1) gives kubectl a terminal, so it asks for a tty and sends its size on the resize stream.
    const p = spawn('/usr/bin/script', [
      '-qec',
      `stty cols 91 rows 33; ${KUBECTL} --kubeconfig ${kubeconfig} exec -it web -- sh -c 'read x; echo got-$x'`,
      '/dev/null',
    ]);
    let out = '';
    p.stdout.on('data', (c: Buffer) => (out += c.toString()));
    try {
      await expect.poll(() => resizes.length, { timeout: 20_000 }).toBeGreaterThan(0);
      // raw terminal: no CR→NL translation on the way, and the fake backend has no pty to do it
      p.stdin.write('hi\n');
      const [code] = await once(p, 'exit');
      expect(out).toContain('got-hi');
      expect(code).toBe(0);
      expect(resizes[0]).toEqual([91, 33]);
    } finally {
      if (p.exitCode === null) p.kill('SIGKILL');
    }
  });

  it('kubectl port-forward carries several connections', async () => {
    const p = spawn(KUBECTL, ['--kubeconfig', kubeconfig, 'port-forward', '--address=127.0.0.1', 'pod/web', `:${echoPort}`]);
    let out = '';
    p.stdout.on('data', (c: Buffer) => (out += c.toString()));
    p.stderr.on('data', (c: Buffer) => (out += c.toString()));
    try {
      await expect.poll(() => out, { timeout: 20_000 }).toMatch(/Forwarding from 127\.0\.0\.1:\d+/);
      const local = Number(/127\.0\.0\.1:(\d+)/.exec(out)![1]);
      for (let i = 0; i < 3; i++) {
        const payload = Buffer.alloc(1024 * 1024, 65 + i);
        const s = net.connect(local, '127.0.0.1');
        const chunks: Buffer[] = [];
        s.on('data', (c: Buffer) => chunks.push(c));
        s.end(payload);
        await once(s, 'close');
        expect(Buffer.concat(chunks).equals(payload)).toBe(true);
      }
    } finally {
      p.kill();
    }
  }, 60_000);
});
