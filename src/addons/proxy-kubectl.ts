import { spawn } from 'node:child_process';
import { fromBase64 } from '../kube/objects.js';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { NotFoundError } from '../errors.js';
import { writeKubeconfig } from '../kube/kubeconfig.js';
import { isStatus, type KubeClient } from '../kube/client.js';
import type { TunnelClient, TunnelSocket } from '../tunnel/client.js';
import { allInOrder } from '../util/all-in-order.js';
import { hubTunnel, type HubTunnelOptions } from './cluster-proxy/hub-tunnel.js';
import { MSA_API } from './managed-serviceaccount/constants.js';
import { asHubUser } from './hub-access.js';

interface MsaCredentials {
  token: string;
  caPem: string;
}

/** The token and CA of ManagedServiceAccount `<cluster>/<name>`, as a hub user reads them (the three reads side by side). */
async function msaCredentials(hub: KubeClient, cluster: string, name: string): Promise<MsaCredentials> {
  const [, , secret] = await allInOrder<[unknown, unknown, { data?: Record<string, string> }]>([
    asHubUser(`get ManagedCluster ${cluster}`, 'get on managedclusters (cluster.open-cluster-management.io)', () =>
      hub.get(`/apis/cluster.open-cluster-management.io/v1/managedclusters/${cluster}`),
    ).catch((err: unknown) => {
      if (isStatus(err, 404)) throw new NotFoundError(`cluster '${cluster}' is not a managed cluster of this hub`, { hint: "see 'ocm-lab get clusters'" });
      throw err;
    }),
    asHubUser(`get ManagedServiceAccount ${cluster}/${name}`, `get on managedserviceaccounts (authentication.open-cluster-management.io) in ${cluster}`, () =>
      hub.get(`/apis/${MSA_API}/namespaces/${cluster}/managedserviceaccounts/${name}`),
    ).catch((err: unknown) => {
      if (isStatus(err, 404))
        throw new NotFoundError(`no ManagedServiceAccount '${name}' in namespace ${cluster} on the hub`, {
          hint: `create one: kubectl --context hub apply -f - (kind ManagedServiceAccount, name ${name}, namespace ${cluster})`,
        });
      throw err;
    }),
    asHubUser(`get Secret ${cluster}/${name}`, `get on secrets in ${cluster}`, () =>
      hub.get<{ data?: Record<string, string> }>(`/api/v1/namespaces/${cluster}/secrets/${name}`),
    ).catch((err: unknown) => {
      if (isStatus(err, 404))
        throw new NotFoundError(`ManagedServiceAccount ${cluster}/${name} has no token Secret yet`, {
          hint: `wait until its status shows TokenReported=True: kubectl --context hub -n ${cluster} get managedserviceaccount ${name} -o yaml`,
        });
      throw err;
    }),
  ]);
  const token = fromBase64(secret.data?.token);
  const caPem = fromBase64(secret.data?.['ca.crt']);
  if (!token || !caPem) throw new NotFoundError(`Secret ${cluster}/${name} lacks token or ca.crt`);
  return { token, caPem };
}

/**
 * kube-apiserver closes a connection that sends no request within 32 s (its ReadHeaderTimeout). A spare
 * kept longer would be closed while a kubectl connection might be taking it, and that kubectl would read
 * EOF: an unused spare is dropped well before, and later connections dial their own.
 */
const SPARE_MAX_AGE_MS = 15_000;

/**
 * kubectl's own connect timeout (client-go's dialer, 30 s): a dial through the tunnel stands in for kubectl's
 * TCP connect, and should not give up sooner than kubectl would on a busy machine.
 */
const KUBECTL_DIAL_TIMEOUT_MS = 30_000;

/**
 * A loopback listener whose every connection is a tunnel dial to `<cluster>:443`. A dial is made ahead,
 * while kubectl starts, and given to the next connection, so kubectl's TLS handshake (client-go gives
 * it 10 s) does not also wait for the round trip through proxy-server and agent: one at once, and one
 * per `dialAhead()` (interactive mode calls it before each command). A spare the far end closed is dropped.
 */
export async function tunnelListener(
  tunnel: Pick<TunnelClient, 'dial'>,
  cluster: string,
  spareMaxAgeMs = SPARE_MAX_AGE_MS,
  onDialError: (err: Error) => void = () => undefined,
): Promise<{ port: number; dialAhead: () => void; close: () => Promise<void> }> {
  const target = `${cluster}:443`;
  const sockets = new Set<net.Socket>();
  let spare: { dial: Promise<TunnelSocket>; expiry: NodeJS.Timeout } | null = null;
  let closed = false;
  const dropSpare = () => {
    if (!spare) return;
    clearTimeout(spare.expiry);
    spare.dial.then(
      (s) => s.destroy(),
      () => undefined,
    );
    spare = null;
  };
  const dialAhead = () => {
    if (spare || closed) return;
    const entry = { dial: tunnel.dial(target), expiry: setTimeout(() => spare === entry && dropSpare(), spareMaxAgeMs).unref() };
    spare = entry;
    const forget = () => spare === entry && dropSpare();
    entry.dial.then((s) => s.on('close', forget), forget);
  };
  const take = (): Promise<TunnelSocket> => {
    if (!spare) return tunnel.dial(target);
    const { dial, expiry } = spare;
    clearTimeout(expiry);
    spare = null;
    return dial.then((s) => (s.closedByFarEnd ? (s.destroy(), tunnel.dial(target)) : s));
  };
  dialAhead();
  const server = net.createServer((local) => {
    sockets.add(local);
    local.on('close', () => sockets.delete(local));
    take().then(
      (remote) => {
        if (local.destroyed) return remote.destroy();
        local.pipe(remote).pipe(local);
        // Either side gone ends the other, also without an orderly end: kubectl exits, and `close` may destroy its
        // connection before its FIN was read; a tunnel connection never told to close would keep the gRPC stream,
        // and with it this process, alive until the far end gives up (about 30 s).
        remote.on('close', () => local.destroy());
        local.on('close', () => remote.destroy());
        remote.on('error', () => local.destroy());
        local.on('error', () => remote.destroy());
      },
      // kubectl can only say "EOF" of a connection closed before its TLS handshake: the reason is told here.
      (err: unknown) => {
        local.destroy();
        onDialError(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    dialAhead,
    close: () =>
      new Promise<void>((resolve) => {
        closed = true;
        dropSpare();
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface ProxySession {
  /** Flags that point kubectl at this session: its kubeconfig and a cache inside the session's directory. */
  kubectlFlags: string[];
  /** Dials the cluster ahead of the next kubectl, while it starts (a no-op when a young dial is waiting). */
  dialAhead: () => void;
  close: () => Promise<void>;
}

/**
 * Everything `proxy kubectl` needs: the MSA's credentials, a tunnel to the hub's
 * proxy-server, a loopback listener into the cluster, and a temporary kubeconfig
 * (mode 0600, in a private directory) holding the token. `close` removes all of it.
 *
 * kubectl's discovery and HTTP cache lives in that directory too: kubectl keys its cache by
 * host and port, and the listener's port is new every session, so the default cache
 * (~/.kube/cache) would gain a directory per session that nothing ever reads again.
 */
export async function openProxySession(
  hub: KubeClient,
  cluster: string,
  msa: string,
  tunnel: HubTunnelOptions = {},
  onDialError?: (err: Error) => void,
): Promise<ProxySession> {
  // The MSA's credentials and the tunnel's (proxy-client certificate, proxy-server pod) are read side by side.
  const made = hubTunnel(hub, { dialTimeoutMs: KUBECTL_DIAL_TIMEOUT_MS, ...tunnel });
  const [creds, { client }] = await allInOrder([msaCredentials(hub, cluster, msa), made]).catch(async (err: unknown) => {
    (await made.catch(() => null))?.client.close();
    throw err;
  });
  let listener: Awaited<ReturnType<typeof tunnelListener>> | undefined;
  let dir: string | undefined;
  try {
    listener = await tunnelListener(client, cluster, SPARE_MAX_AGE_MS, onDialError);
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-proxy-'));
    const kubeconfig = path.join(dir, 'kubeconfig');
    // The spoke's API server certificate names 127.0.0.1, so TLS is verified against the MSA's ca.crt.
    await writeKubeconfig(kubeconfig, [{ name: cluster, server: `https://127.0.0.1:${listener.port}`, caPem: creds.caPem, token: creds.token }]);
    const l = listener;
    const d = dir;
    return {
      kubectlFlags: ['--kubeconfig', kubeconfig, '--cache-dir', path.join(dir, 'cache')],
      dialAhead: l.dialAhead,
      close: async () => {
        await l.close();
        client.close();
        await fs.rm(d, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await listener?.close();
    client.close();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Runs kubectl with the session's flags; resolves with its exit status (output goes to ours).
 * `interrupt` aborting sends kubectl SIGINT (a Ctrl-C at a terminal reaches it anyway), so the caller
 * gets control back and can remove the session's files.
 */
export function runKubectl(kubectl: string, session: Pick<ProxySession, 'kubectlFlags'>, args: string[], interrupt?: AbortSignal): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(kubectl, [...session.kubectlFlags, ...args], { stdio: ['inherit', 'inherit', 'inherit'] });
    const forward = () => child.kill('SIGINT');
    interrupt?.addEventListener('abort', forward, { once: true });
    if (interrupt?.aborted) forward();
    child.on('error', (err) => {
      interrupt?.removeEventListener('abort', forward);
      reject(new Error(`could not run ${kubectl}: ${err.message}`));
    });
    child.on('exit', (code, signal) => {
      interrupt?.removeEventListener('abort', forward);
      resolve(code ?? (signal ? 128 + (os.constants.signals[signal] ?? 0) : 1));
    });
  });
}

/**
 * Runs `work` with SIGINT and SIGTERM turned into an abort of the signal it gets, instead of ending
 * the process on the spot: whatever `finally` the caller has (a temporary kubeconfig to remove) runs.
 * Resolves with the signal that came, if any.
 */
export async function withInterrupts(work: (interrupt: AbortSignal) => Promise<void>): Promise<NodeJS.Signals | null> {
  const controller = new AbortController();
  let received: NodeJS.Signals | null = null;
  const onSignal = (sig: NodeJS.Signals) => {
    received ??= sig;
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await work(controller.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return received;
}

/** Splits an interactive `kubectl>` line into arguments: whitespace separates, quotes group. */
export function splitCommandLine(line: string): string[] {
  const args: string[] = [];
  let current = '';
  let quote: string | null = null;
  let any = false;
  for (const ch of line) {
    if (quote) {
      if (ch === quote) quote = null;
      else current += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      any = true;
    } else if (/\s/.test(ch)) {
      if (any || current) args.push(current);
      current = '';
      any = false;
    } else {
      current += ch;
    }
  }
  if (quote) throw new Error(`unclosed ${quote} in: ${line}`);
  if (any || current) args.push(current);
  return args;
}
