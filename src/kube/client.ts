import { readFileSync, statSync } from 'node:fs';
import fs from 'node:fs/promises';
import https from 'node:https';
import path from 'node:path';
import readline from 'node:readline';
import { ExecCredentials } from './exec-credential.js';
import { readKubeconfig } from './kubeconfig.js';
import { sleep } from './wait.js';

/**
 * The lab's one Kubernetes client (CLI, install, OCM, addons, nodelet, pods'
 * entry points): one keep-alive TLS agent, plain objects in and out sent
 * exactly as given (times stay RFC 3339 strings, which matters for Lease
 * MicroTime fields; CRD schemas keep every key), list+watch streams.
 * Why ours and not @kubernetes/client-node 1.4.0, measured 2026-11-23 with
 * `node --input-type=module -e "await import(…)"` on Node 20 (2 shared cores,
 * median of 7): importing client-node takes 740 ms and +75 MB of RSS, this
 * module 60 ms and +12 MB; a whole process that only imports it runs
 * 0.7 s / 120 MB against 0.15 s / 53 MB. Every pod entry point, every nodelet
 * and every CLI command would pay that at start.
 */
export interface KubeEndpoint {
  server: string;
  caPem: string;
  certPem?: string;
  keyPem?: string;
  token?: string;
  /** A token file read again as it changes (projected tokens are renewed); wins over `token`. */
  tokenFile?: string;
  /** A credential plugin's tokens (kubeconfig `exec`); wins over both. */
  credentials?: ExecCredentials;
}

/** Where the kubelet mounts a pod's ServiceAccount credentials (the `kube-api-access-*` volume). */
const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * The in-cluster endpoint as client-go's rest.InClusterConfig finds it:
 * KUBERNETES_SERVICE_HOST/PORT, and the ServiceAccount's token, ca.crt and
 * namespace files.
 */
export async function inClusterEndpoint(
  env: NodeJS.ProcessEnv = process.env,
  dir: string = SERVICE_ACCOUNT_DIR,
): Promise<KubeEndpoint & { namespace?: string }> {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new Error('not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set');
  const tokenFile = path.join(dir, 'token');
  let caPem: string;
  try {
    caPem = await fs.readFile(path.join(dir, 'ca.crt'), 'utf8');
    await fs.access(tokenFile);
  } catch (err) {
    throw new Error(`not running in a cluster: ${(err as Error).message} (no ServiceAccount credentials mounted at ${dir})`);
  }
  const namespace = (await fs.readFile(path.join(dir, 'namespace'), 'utf8').catch(() => '')).trim() || undefined;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return { server: `https://${hostPart}:${port}`, caPem, tokenFile, ...(namespace ? { namespace } : {}) };
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    /** The API server's own message (its Status `message`), without the request in front. */
    readonly serverMessage: string = message,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export function isStatus(err: unknown, status: number): boolean {
  return err instanceof ApiError && err.status === status;
}

/** The endpoint and credentials of a kubeconfig's current context (certificate or token). */
export async function endpointFromKubeconfig(file: string): Promise<KubeEndpoint & { namespace?: string }> {
  const ctx = await readKubeconfig(file);
  if (!ctx.caPem) throw new Error(`${file}: the cluster of context '${ctx.context}' has no certificate authority`);
  if (ctx.tokenFile) await fs.access(ctx.tokenFile);
  return {
    server: ctx.server,
    caPem: ctx.caPem,
    certPem: ctx.certPem,
    keyPem: ctx.keyPem,
    ...(ctx.token ? { token: ctx.token } : {}),
    ...(ctx.tokenFile ? { tokenFile: ctx.tokenFile } : {}),
    ...(ctx.exec ? { credentials: new ExecCredentials(ctx.exec, { context: ctx.context, server: ctx.server, caPem: ctx.caPem }) } : {}),
    namespace: ctx.namespace,
  };
}

export interface RequestOptions {
  body?: unknown;
  contentType?: string;
  query?: Record<string, string | number | boolean | undefined>;
  timeoutMs?: number;
}

export type WatchEvent<T> =
  { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: T } | { type: 'ERROR'; object: { code?: number; message?: string; reason?: string } };

/** How often a request the server answers 429 with Retry-After is sent (client-go's maxRetries). */
const MAX_RETRIES_AFTER_429 = 10;

export class KubeClient {
  private readonly agent: https.Agent;
  private readonly base: URL;
  private fileToken: { value: string; stamp: string } | undefined;

  constructor(readonly endpoint: KubeEndpoint) {
    this.base = new URL(endpoint.server);
    this.agent = new https.Agent({ keepAlive: true, maxSockets: 8, ca: endpoint.caPem, cert: endpoint.certPem, key: endpoint.keyPem });
  }

  static async fromKubeconfig(file: string): Promise<KubeClient> {
    return new KubeClient(await endpointFromKubeconfig(file));
  }

  /** A client with the pod's ServiceAccount credentials, the way in-cluster programs find them. */
  static async inCluster(env: NodeJS.ProcessEnv = process.env, dir: string = SERVICE_ACCOUNT_DIR): Promise<KubeClient> {
    return new KubeClient(await inClusterEndpoint(env, dir));
  }

  /** The bearer token: the file's content, read again whenever the file changed (renewed projected tokens are swapped in by rename). */
  private bearer(): string | undefined | Promise<string> {
    if (this.endpoint.credentials) return this.endpoint.credentials.token();
    const file = this.endpoint.tokenFile;
    if (!file) return this.endpoint.token;
    try {
      const st = statSync(file);
      const stamp = `${st.ino}:${st.mtimeMs}:${st.size}`;
      if (this.fileToken?.stamp !== stamp) this.fileToken = { value: readFileSync(file, 'utf8').trim(), stamp };
    } catch {
      // Being replaced right now: keep the last token; without one the request goes unauthenticated and fails with 401.
    }
    return this.fileToken?.value;
  }

  close(): void {
    this.agent.destroy();
  }

  private url(p: string, query: RequestOptions['query']): URL {
    const u = new URL(p, this.base);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u;
  }

  private async open(method: string, p: string, opts: RequestOptions, signal?: AbortSignal): Promise<import('node:http').IncomingMessage> {
    const u = this.url(p, opts.query);
    const body = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
    const token = await this.bearer();
    const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      const req = https.request(
        {
          method,
          protocol: u.protocol,
          hostname: u.hostname,
          port: u.port,
          path: `${u.pathname}${u.search}`,
          agent: this.agent,
          signal,
          headers: {
            accept: 'application/json',
            'user-agent': 'ocm-lab-nodelet',
            ...bearerHeader(token),
            ...(body ? { 'content-type': opts.contentType ?? 'application/json', 'content-length': body.length } : {}),
          },
        },
        resolve,
      );
      req.on('error', reject);
      if (opts.timeoutMs) req.setTimeout(opts.timeoutMs, () => req.destroy(new Error(`${method} ${p}: no answer within ${opts.timeoutMs} ms`)));
      req.end(body);
    });
    // A plugin's token the server no longer takes (revoked, or expired early): the next request runs the plugin again.
    if (res.statusCode === 401) this.endpoint.credentials?.invalidate();
    return res;
  }

  async request<T>(method: string, p: string, opts: RequestOptions = {}): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const res = await this.open(method, p, { timeoutMs: 30_000, ...opts });
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      const status = res.statusCode ?? 0;
      if (status >= 200 && status < 300) return (text ? JSON.parse(text) : {}) as T;
      // As client-go: a 429 with Retry-After was not processed (e.g. "storage is (re)initializing" right after a CRD
      // changed), so the request is sent again after the time the server names, up to 10 times.
      const retryAfterS = Number(res.headers['retry-after']);
      if (status === 429 && Number.isFinite(retryAfterS) && attempt < MAX_RETRIES_AFTER_429) {
        await sleep(Math.min(Math.max(retryAfterS, 0.1), 10) * 1000);
        continue;
      }
      throw apiError(method, p, status, text);
    }
  }

  /**
   * An HTTP/1.1 upgrade (e.g. SPDY/3.1 for pods/portforward): resolves with the raw connection and the bytes read
   * past the 101 answer; any other answer is an ApiError with its body. Its own TLS connection, outside the keep-alive pool.
   */
  async upgrade(method: string, p: string, headers: Record<string, string | string[]>): Promise<{ socket: import('node:net').Socket; head: Buffer }> {
    const u = this.url(p, undefined);
    const token = await this.bearer();
    const { caPem: ca, certPem: cert, keyPem: key } = this.endpoint;
    return new Promise((resolve, reject) => {
      const req = https.request({
        method,
        hostname: u.hostname,
        port: u.port,
        path: `${u.pathname}${u.search}`,
        agent: false,
        ca,
        cert,
        key,
        headers: { 'user-agent': 'ocm-lab', ...bearerHeader(token), ...headers },
      });
      req.on('upgrade', (_res, socket, head) => {
        socket.setTimeout(0);
        resolve({ socket, head });
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => reject(apiError(method, p, res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'))));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${p}: no answer within 30 s`)));
      req.end();
    });
  }

  /** A GET whose answer is text, not JSON (e.g. pods/log). */
  async getText(p: string, query?: RequestOptions['query']): Promise<string> {
    const res = await this.open('GET', p, { timeoutMs: 30_000, query });
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) throw apiError('GET', p, status, text);
    return text;
  }

  get<T>(p: string, query?: RequestOptions['query']): Promise<T> {
    return this.request<T>('GET', p, { query });
  }
  post<T>(p: string, body: unknown, query?: RequestOptions['query']): Promise<T> {
    return this.request<T>('POST', p, { body, query });
  }
  put<T>(p: string, body: unknown): Promise<T> {
    return this.request<T>('PUT', p, { body });
  }
  /** JSON merge patch (RFC 7386): objects merge, arrays are replaced whole. */
  mergePatch<T>(p: string, body: unknown): Promise<T> {
    return this.request<T>('PATCH', p, { body, contentType: 'application/merge-patch+json' });
  }
  delete<T>(p: string, body?: unknown, query?: RequestOptions['query']): Promise<T> {
    return this.request<T>('DELETE', p, { body, query });
  }

  /**
   * Streams watch events of a collection until the server ends the watch, the
   * connection breaks or `signal` aborts. Resolves normally on a clean end.
   */
  async watch<T>(p: string, query: RequestOptions['query'], onEvent: (e: WatchEvent<T>) => void, signal: AbortSignal): Promise<void> {
    const res = await this.open('GET', p, { query: { ...query, watch: 1 } }, signal);
    const status = res.statusCode ?? 0;
    if (status !== 200) {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      throw apiError('WATCH', p, status, Buffer.concat(chunks).toString('utf8'));
    }
    const lines = readline.createInterface({ input: res, crlfDelay: Infinity });
    try {
      for await (const line of lines) {
        if (!line.trim()) continue;
        onEvent(JSON.parse(line) as WatchEvent<T>);
      }
    } catch (err) {
      if (!signal.aborted) throw err;
    }
  }
}

function bearerHeader(token: string | undefined): Record<string, string> {
  return token ? { authorization: `Bearer ${token}` } : {};
}

function apiError(method: string, p: string, status: number, text: string): ApiError {
  let reason = '';
  let message = text.trim().slice(0, 500);
  try {
    const s = JSON.parse(text) as { reason?: string; message?: string };
    reason = s.reason ?? '';
    message = s.message ?? message;
  } catch {
    // not a Status object
  }
  return new ApiError(status, reason, `${method} ${p}: ${status}${reason ? ` ${reason}` : ''}: ${message}`, message);
}
