import http from 'node:http';
import net from 'node:net';
import { listen } from '../../src/util/listen.js';

/** A forward proxy on 127.0.0.1 for tests: CONNECT tunnels, and plain-HTTP requests in absolute form. */
export interface ConnectProxy {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Every CONNECT target (`dl.k8s.io:443`) and every absolute URL asked for, in order. */
  seen: string[];
  /** The Proxy-Authorization headers received ('' when a request had none). */
  authorizations: string[];
  close(): Promise<void>;
}

export interface ConnectProxyOptions {
  /** Where a name the proxy is asked for really is (the test's servers on loopback), null for nowhere (502); default: the name itself. */
  resolve?: (host: string, port: number) => { host: string; port: number } | null;
  /** Answer every CONNECT with this status instead of tunnelling (403, 407, 502). */
  answer?: number;
  /** Demand this `Proxy-Authorization` (407 otherwise). */
  authorization?: string;
}

/**
 * Starts a small real proxy on 127.0.0.1 (node:http's 'connect' event and net.connect, as a corporate CONNECT proxy
 * works): the tests see which targets went through it and with what credentials.
 */
export async function startConnectProxy(opts: ConnectProxyOptions = {}): Promise<ConnectProxy> {
  const seen: string[] = [];
  const authorizations: string[] = [];
  const sockets = new Set<net.Socket>();
  const where = (host: string, port: number) => (opts.resolve ? opts.resolve(host, port) : { host, port });
  const refusal = (req: http.IncomingMessage): number | undefined => {
    authorizations.push(String(req.headers['proxy-authorization'] ?? ''));
    if (opts.answer) return opts.answer;
    if (opts.authorization !== undefined && req.headers['proxy-authorization'] !== opts.authorization) return 407;
    return undefined;
  };
  const server = http.createServer((req, res) => {
    seen.push(req.url ?? '');
    const status = refusal(req);
    if (status) {
      res.writeHead(status, status === 407 ? { 'proxy-authenticate': 'Basic realm="test"' } : {}).end();
      return;
    }
    const target = new URL(req.url ?? '');
    const to = where(target.hostname, Number(target.port || 80));
    if (!to) {
      res.writeHead(502).end();
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const upstream = http.request({ host: to.host, port: to.port, method: req.method, path: `${target.pathname}${target.search}`, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    seen.push(req.url ?? '');
    const status = refusal(req);
    if (status) {
      client.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\n${status === 407 ? 'Proxy-Authenticate: Basic realm="test"\r\n' : ''}\r\n`);
      return;
    }
    const [host = '', port = '443'] = (req.url ?? '').split(/:(?=\d+$)/);
    const to = where(host, Number(port));
    if (!to) {
      client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      return;
    }
    const upstream = net.connect({ host: to.host, port: to.port }, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
  });
  const port = await listen(server, 0, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    authorizations,
    async close() {
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
