import net from 'node:net';

/**
 * The VPC gateway: a TCP forwarder that runs in a small container on the hub's
 * network and the spokes' networks and forwards only the hub's published
 * endpoints (kube-apiserver, the proxy-server's agent port), the way kind fronts
 * HA control planes with a load-balancer container. Spokes reach the hub only
 * through it; nothing in it forwards towards a spoke network.
 */

/** One `--forward PORT=HOST:PORT`: listen on PORT, forward to HOST:PORT. */
export interface Forward {
  listenPort: number;
  host: string;
  port: number;
}

const FORWARD_SYNTAX = /^(\d{1,5})=(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$/;

function port(text: string, what: string, spec: string, allowZero: boolean): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < (allowZero ? 0 : 1) || n > 65535) throw new Error(`--forward ${JSON.stringify(spec)}: ${what} ${text} is not a port number`);
  return n;
}

/** `6443=hub-control-plane:6443` → { listenPort: 6443, host: 'hub-control-plane', port: 6443 }. Listen port 0 picks a free one. */
export function parseForward(spec: string): Forward {
  const m = FORWARD_SYNTAX.exec(spec.trim());
  if (!m) throw new Error(`--forward ${JSON.stringify(spec)}: expected PORT=HOST:PORT, e.g. 6443=hub-control-plane:6443`);
  const host = (m[2] as string).replace(/^\[(.*)\]$/, '$1');
  return { listenPort: port(m[1] as string, 'listen port', spec, true), host, port: port(m[3] as string, 'target port', spec, false) };
}

export interface VpcGatewayOptions {
  /** Address to listen on (default 0.0.0.0: every network the container is attached to). */
  listenHost?: string;
  /** How long a target may take to accept a connection before the client's is closed (default 10 s). */
  connectTimeoutMs?: number;
  /** One line per failed connection (never any payload). Default: stderr. */
  log?: (line: string) => void;
}

export interface VpcGateway {
  /** The ports listened on, in the order of the forwards (a listen port 0 becomes the one picked). */
  readonly ports: number[];
  /** Connections open now. */
  activeConnections(): number;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

/** Starts listening for every forward; rejects (closing what was opened) if one port cannot be bound. */
export async function startVpcGateway(forwards: readonly Forward[], options: VpcGatewayOptions = {}): Promise<VpcGateway> {
  const listenHost = options.listenHost ?? '0.0.0.0';
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const open = new Set<net.Socket>();
  const servers: net.Server[] = [];
  let closing = false;

  const relay = (fwd: Forward, client: net.Socket): void => {
    if (closing) {
      client.destroy();
      return;
    }
    const from = `${client.remoteAddress ?? '?'}:${client.remotePort ?? '?'}`;
    const upstream = net.connect({ host: fwd.host, port: fwd.port, allowHalfOpen: true }); // resolves the name for every connection
    open.add(client);
    open.add(upstream);
    let reported = false;
    let connected = false;
    const fail = (where: string, err: Error & { code?: string }): void => {
      if (!reported) {
        reported = true;
        log(`${new Date().toISOString()} ${fwd.listenPort} -> ${fwd.host}:${fwd.port} from ${from}: ${where}: ${err.code ?? err.message}`);
      }
      // A reset tells the client at once that the far side is gone.
      client.resetAndDestroy();
      upstream.destroy();
    };
    const timer = setTimeout(
      () => fail('connect', Object.assign(new Error(`no answer within ${connectTimeoutMs} ms`), { code: 'ETIMEDOUT' })),
      connectTimeoutMs,
    );
    upstream.once('connect', () => {
      connected = true;
      clearTimeout(timer);
    });
    upstream.on('error', (err) => {
      clearTimeout(timer);
      fail(connected ? 'target' : 'connect', err);
    });
    client.on('error', (err) => fail('client', err));
    // pipe() keeps back-pressure both ways and passes an end (FIN) on; allowHalfOpen keeps the other direction going.
    client.pipe(upstream);
    upstream.pipe(client);
    client.once('close', () => {
      open.delete(client);
      clearTimeout(timer);
      if (!upstream.destroyed && (upstream.writableEnded || !connected)) upstream.destroy();
    });
    upstream.once('close', () => {
      open.delete(upstream);
      if (!client.destroyed && !client.writableEnded) client.end();
    });
  };

  const listen = (fwd: Forward): Promise<net.Server> =>
    new Promise((resolve, reject) => {
      const server = net.createServer({ allowHalfOpen: true, pauseOnConnect: false }, (client) => relay(fwd, client));
      server.once('error', reject);
      server.listen({ host: listenHost, port: fwd.listenPort }, () => {
        server.off('error', reject);
        server.on('error', (err) => log(`${new Date().toISOString()} listener ${fwd.listenPort}: ${err.message}`));
        resolve(server);
      });
    });

  const close = async (): Promise<void> => {
    closing = true;
    const closed = servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())));
    for (const s of open) s.destroy();
    await Promise.all(closed);
  };

  try {
    for (const fwd of forwards) servers.push(await listen(fwd));
  } catch (err) {
    await close();
    const e = err as Error & { code?: string };
    throw new Error(`vpc-gateway: cannot listen on ${listenHost}:${forwards[servers.length]?.listenPort}: ${e.code ?? e.message}`);
  }
  return {
    ports: servers.map((s) => (s.address() as net.AddressInfo).port),
    activeConnections: () => open.size,
    close,
  };
}
