import { Buffer } from 'node:buffer';
import http from 'node:http';
import net from 'node:net';
import { Readable } from 'node:stream';
import tls from 'node:tls';
import zlib from 'node:zlib';
import { InvalidInputError, ProxyError } from '../errors.js';

/*
 * Requests to the outside world (release downloads, registry pulls, the publisher probes) go through here: direct, or
 * through the proxy the environment names. The rules are Go's (golang.org/x/net/http/httpproxy, which kind's nodes,
 * containerd and kubectl follow), except that the lower-case variable wins over the upper-case one, as in curl and
 * Node.js's own EnvHttpProxyAgent (docs/notes.md, "Proxy variables: Go, curl, Node.js, and the rules ocm-lab follows",
 * says each rule and where it was read). Loopback never goes through a proxy. Node 22 has no proxy support of its own for fetch, so an https URL is tunnelled
 * with CONNECT here and an http URL is sent to the proxy in absolute form; nothing else is needed (no dependency).
 */

/** The variables, the winning spelling first. */
const VARIABLES = {
  https: ['https_proxy', 'HTTPS_PROXY'],
  http: ['http_proxy', 'HTTP_PROXY'],
  no: ['no_proxy', 'NO_PROXY'],
} as const;

/** A proxy setting of the environment: the variable it came from and its value. */
interface Setting {
  variable: string;
  value: string;
}

function setting(env: NodeJS.ProcessEnv, names: readonly string[]): Setting | undefined {
  for (const variable of names) {
    const value = env[variable]?.trim();
    if (value) return { variable, value };
  }
  return undefined;
}

/** A proxy value as it may be printed: whatever stands before the last `@` of its authority (user, password) is `***`. */
export function maskProxy(value: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(value)?.[0] ?? '';
  const rest = value.slice(scheme.length);
  const authorityEnd = rest.search(/[/?#]/);
  const authority = authorityEnd < 0 ? rest : rest.slice(0, authorityEnd);
  const at = authority.lastIndexOf('@');
  return at < 0 ? value : `${scheme}***${rest.slice(at)}`;
}

/** The proxy one request goes through. */
export interface ProxyChoice {
  url: URL;
  variable: string;
  /** `http://proxy:3128`, `http://***@proxy:3128` with credentials: what messages print. */
  shown: string;
}

/**
 * A proxy variable's value as a URL. `proxy:3128` and `10.0.0.1:3128` mean `http://…`, as in Go; `http://` and `https://`
 * proxies are spoken to, anything else (socks5://) or a value that does not parse is exit 2 naming the variable and the
 * value (masked).
 */
export function parseProxy(s: Setting): ProxyChoice {
  const bad = (why: string) =>
    new InvalidInputError(`${s.variable}=${maskProxy(s.value)}: ${why}`, {
      hint: `set ${s.variable} to a proxy URL such as http://proxy.example:3128 (user:password@ before the host when it needs them), or unset it`,
    });
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(s.value) ? s.value : `http://${s.value}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw bad('not a proxy URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad(`a ${url.protocol.slice(0, -1)} proxy; ocm-lab speaks to http:// and https:// proxies`);
  if (!url.hostname) throw bad('no proxy host in it');
  const shown = `${url.protocol}//${url.username || url.password ? '***@' : ''}${url.host}`;
  return { url, variable: s.variable, shown };
}

/** An IPv4 or IPv6 address as a bigint and its family, or null for a name. */
function ipValue(host: string): { family: 4 | 6; value: bigint } | null {
  const family = net.isIP(host);
  if (family === 4) return { family, value: host.split('.').reduce((n, o) => (n << 8n) | BigInt(Number(o)), 0n) };
  if (family !== 6) return null;
  const [head = '', tail] = host.includes('::') ? host.split('::') : [host, undefined];
  const groups = (part: string): number[] =>
    part
      .split(':')
      .filter(Boolean)
      .flatMap((g) => {
        if (!g.includes('.')) return [parseInt(g, 16)];
        const v4 = ipValue(g)?.value ?? 0n;
        return [Number(v4 >> 16n), Number(v4 & 0xffffn)];
      });
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  const all = [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
  return { family: 6, value: all.reduce((n, g) => (n << 16n) | BigInt(g), 0n) };
}

function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  const ip = ipValue(host);
  if (!ip) return false;
  if (ip.family === 4) return ip.value >> 24n === 127n;
  // ::1, and IPv4-mapped 127.0.0.0/8 (::ffff:127.x.x.x).
  return ip.value === 1n || ip.value >> 24n === 0xffff7fn;
}

/** A URL's host as NO_PROXY entries are compared with it: lower case, no brackets around IPv6, no trailing dot. */
function hostOf(url: URL): string {
  return url.hostname
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

function portOf(url: URL): string {
  return url.port || (url.protocol === 'https:' ? '443' : '80');
}

/** One NO_PROXY entry's test of a host and port. */
type Matcher = (host: string, port: string, ip: { family: 4 | 6; value: bigint } | null) => boolean;

function cidrMatcher(entry: string): Matcher | null {
  const slash = entry.indexOf('/');
  if (slash < 0) return null;
  const base = ipValue(entry.slice(0, slash));
  const bits = Number(entry.slice(slash + 1));
  const width = base?.family === 4 ? 32 : 128;
  if (!base || !/^\d+$/.test(entry.slice(slash + 1)) || bits > width) return null;
  const shift = BigInt(width - bits);
  return (_host, _port, ip) => ip !== null && ip.family === base.family && ip.value >> shift === base.value >> shift;
}

/** `host`, `host:port`, `[v6]:port` of an entry; port '' when none. */
function splitEntry(entry: string): { host: string; port: string } {
  const bracketed = /^\[([^\]]*)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { host: bracketed[1] ?? '', port: bracketed[2] ?? '' };
  if (net.isIP(entry) === 6) return { host: entry, port: '' };
  const withPort = /^(.*):(\d+)$/.exec(entry);
  return withPort ? { host: withPort[1] ?? '', port: withPort[2] ?? '' } : { host: entry, port: '' };
}

function entryMatcher(raw: string): Matcher | null {
  const entry = raw.trim().toLowerCase();
  if (!entry) return null;
  if (entry === '*') return () => true;
  const cidr = cidrMatcher(entry);
  if (cidr) return cidr;
  const { host, port } = splitEntry(entry);
  if (!host) return null;
  const portOk = (p: string) => port === '' || port === p;
  const ip = ipValue(host);
  if (ip) return (_h, p, target) => target !== null && target.family === ip.family && target.value === ip.value && portOk(p);
  // `*.example.com` is `.example.com`; `.example.com` matches below it only; `example.com` matches itself and below it.
  const suffix = host.startsWith('*.') ? host.slice(1) : host.startsWith('.') ? host : `.${host}`;
  const itself = !host.startsWith('.') && !host.startsWith('*.');
  const name = suffix.replace(/\.$/, '');
  return (h, p) => (h.endsWith(name) || (itself && h === name.slice(1))) && portOk(p);
}

/**
 * Whether NO_PROXY's `list` sends `url` direct: `*` (everything); an IP, with or without a port; a CIDR (IP hosts
 * in it: names are not resolved for it); a name, which matches itself and every name below it (`example.com`,
 * `*.example.com` and `.example.com` the names below it only), with or without a port. Entries are separated by
 * commas (spaces too); case does not matter; what does not parse is passed over.
 */
export function noProxyMatches(list: string, url: URL): boolean {
  const host = hostOf(url);
  const port = portOf(url);
  const ip = ipValue(host);
  return list
    .split(/[,\s]+/)
    .map(entryMatcher)
    .some((m) => m !== null && m(host, port, ip));
}

/**
 * The proxy a request to `target` goes through, or null for direct: loopback (and `localhost`) always direct, then
 * $https_proxy/$HTTPS_PROXY for https URLs and $http_proxy/$HTTP_PROXY for http ones (the lower-case spelling wins when
 * both are set), unless $no_proxy/$NO_PROXY matches. A proxy value that does not parse is exit 2.
 */
export function proxyFor(target: string | URL, env: NodeJS.ProcessEnv = process.env): ProxyChoice | null {
  const url = typeof target === 'string' ? new URL(target) : target;
  const scheme = url.protocol === 'https:' ? 'https' : url.protocol === 'http:' ? 'http' : null;
  if (!scheme || isLoopback(hostOf(url))) return null;
  const proxy = setting(env, VARIABLES[scheme]);
  if (!proxy) return null;
  const no = setting(env, VARIABLES.no);
  if (no && noProxyMatches(no.value, url)) return null;
  return parseProxy(proxy);
}

/** The proxy settings that are set, each with its variable, masked: what the kind nodes get and what `up` says it used. */
export function proxyEnvironment(env: NodeJS.ProcessEnv = process.env): { https?: Setting; http?: Setting; no?: Setting } {
  const pick = (names: readonly string[]) => setting(env, names);
  const out: { https?: Setting; http?: Setting; no?: Setting } = {};
  const [https, httpSetting, no] = [pick(VARIABLES.https), pick(VARIABLES.http), pick(VARIABLES.no)];
  if (https) out.https = https;
  if (httpSetting) out.http = httpSetting;
  if (no) out.no = no;
  return out;
}

/** The part of fetch's options outbound requests use. */
export interface OutboundInit {
  method?: 'GET' | 'HEAD';
  headers?: Record<string, string>;
  /** `follow` (fetch's default) or `manual`: a 3xx answer is returned as it is. */
  redirect?: 'follow' | 'manual';
  signal?: AbortSignal;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** As fetch: at most 20 redirects are followed. */
const MAX_REDIRECTS = 20;

/**
 * fetch for requests to the outside world: direct (Node's own fetch, as before) when no proxy applies, else through
 * the proxy. Redirects are followed hop by hop, each hop decided again (a CDN in NO_PROXY is reached directly). Errors
 * are fetch's (a TypeError whose cause has the code, the signal's reason when it aborts), and a ProxyError (exit 9)
 * when the proxy refuses the connection, closes it, answers CONNECT with another status than 2xx or asks for
 * credentials (407).
 */
export async function outboundFetch(target: string, init: OutboundInit = {}, env: NodeJS.ProcessEnv = process.env): Promise<Response> {
  const anyProxy = setting(env, VARIABLES.https) ?? setting(env, VARIABLES.http);
  if (!anyProxy) return fetch(target, init);
  let url = new URL(target);
  let headers = { ...init.headers };
  let method = init.method ?? 'GET';
  for (let hop = 0; ; hop++) {
    const proxy = proxyFor(url, env);
    const res = proxy
      ? await viaProxy(url, { method, headers, signal: init.signal }, proxy)
      : await fetch(url, { ...init, method, headers, redirect: 'manual' });
    const location = res.headers.get('location');
    if (init.redirect === 'manual' || !REDIRECTS.has(res.status) || !location) return res;
    await res.body?.cancel().catch(() => undefined);
    if (hop >= MAX_REDIRECTS) throw new TypeError('fetch failed', { cause: new Error(`more than ${MAX_REDIRECTS} redirects from ${target}`) });
    const next = new URL(location, url);
    // As fetch: credentials stay with their origin; a 303 (and a POST's 301/302) become GET, here always GET or HEAD.
    if (next.origin !== url.origin) headers = Object.fromEntries(Object.entries(headers).filter(([k]) => k.toLowerCase() !== 'authorization'));
    if (res.status === 303 && method !== 'HEAD') method = 'GET';
    url = next;
  }
}

/** A fetch-like failure: a TypeError whose cause carries the code (what describeFetchError and the probes read). */
function fetchFailed(cause: Error): TypeError {
  return new TypeError('fetch failed', { cause });
}

function errorCode(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return e.code ?? e.message ?? String(err);
}

/** Rejects when `signal` aborts (with its reason), and says how to stop listening. */
function onAbort(signal: AbortSignal | undefined, abort: (reason: unknown) => void): () => void {
  if (!signal) return () => undefined;
  const listener = () => abort(signal.reason);
  signal.addEventListener('abort', listener, { once: true });
  return () => signal.removeEventListener('abort', listener);
}

/** A connection to the proxy itself (TLS for an https:// proxy). */
function connectToProxy(proxy: ProxyChoice, targetUrl: URL, signal?: AbortSignal): Promise<net.Socket> {
  signal?.throwIfAborted();
  const host = proxy.url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = Number(proxy.url.port || (proxy.url.protocol === 'https:' ? 443 : 80));
  return new Promise((resolve, reject) => {
    const socket =
      proxy.url.protocol === 'https:'
        ? tls.connect({ host, port, ...(net.isIP(host) ? {} : { servername: host }), ALPNProtocols: ['http/1.1'] })
        : net.connect({ host, port });
    const stop = onAbort(signal, (reason) => {
      socket.destroy();
      reject(reason);
    });
    socket.once(proxy.url.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
      stop();
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', (err) => {
      stop();
      reject(new ProxyError(proxy.shown, proxy.variable, targetUrl.toString(), `could not be reached (${errorCode(err)})`));
    });
  });
}

/** The proxy's answer to CONNECT host:port: resolves on 2xx with the socket, now a tunnel to the target. */
function tunnel(socket: net.Socket, proxy: ProxyChoice, targetUrl: URL, signal?: AbortSignal): Promise<net.Socket> {
  const authority = `${targetUrl.hostname}:${portOf(targetUrl)}`;
  const lines = [`CONNECT ${authority} HTTP/1.1`, `Host: ${authority}`];
  const auth = proxyAuthorization(proxy.url);
  if (auth) lines.push(`Proxy-Authorization: ${auth}`);
  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0);
    const fail = (reason: string) => {
      cleanup();
      socket.destroy();
      reject(new ProxyError(proxy.shown, proxy.variable, targetUrl.toString(), reason));
    };
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > 64 * 1024) fail(`answered CONNECT ${authority} with more than 64 KiB of headers`);
        return;
      }
      cleanup();
      const status = /^HTTP\/1\.[01] (\d{3})\s*([^\r\n]*)/.exec(head.subarray(0, end).toString('latin1'));
      const code = Number(status?.[1] ?? 0);
      if (code < 200 || code > 299) {
        socket.destroy();
        const said = status
          ? `HTTP ${code}${status[2] ? ` ${status[2]}` : ''}`
          : `something that is not HTTP (${JSON.stringify(head.subarray(0, 40).toString('latin1'))})`;
        reject(new ProxyError(proxy.shown, proxy.variable, targetUrl.toString(), `answered CONNECT ${authority} with ${said}`));
        return;
      }
      const rest = head.subarray(end + 4);
      if (rest.length) socket.unshift(rest);
      resolve(socket);
    };
    const onError = (err: Error) => fail(`broke the connection during CONNECT ${authority} (${errorCode(err)})`);
    const onEnd = () => fail(`closed the connection without answering CONNECT ${authority}`);
    const stop = onAbort(signal, (reason) => {
      cleanup();
      socket.destroy();
      reject(reason);
    });
    const cleanup = () => {
      stop();
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
    };
    socket.on('data', onData);
    socket.once('error', onError);
    socket.once('end', onEnd);
    socket.once('close', onEnd);
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}

function proxyAuthorization(url: URL): string | undefined {
  if (!url.username && !url.password) return undefined;
  return `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
}

/** TLS to the target inside the tunnel, its name checked against the system's CAs (and $NODE_EXTRA_CA_CERTS) as fetch does. */
function targetTls(tunnelSocket: net.Socket, url: URL, signal?: AbortSignal): Promise<tls.TLSSocket> {
  const host = hostOf(url);
  return new Promise((resolve, reject) => {
    const secure = tls.connect({ socket: tunnelSocket, ...(net.isIP(host) ? {} : { servername: host }), ALPNProtocols: ['http/1.1'] });
    const stop = onAbort(signal, (reason) => {
      secure.destroy();
      reject(reason);
    });
    secure.once('secureConnect', () => {
      stop();
      secure.removeAllListeners('error');
      resolve(secure);
    });
    secure.once('error', (err) => {
      stop();
      reject(fetchFailed(err));
    });
  });
}

/** One request through the proxy: CONNECT and TLS for https, the absolute URL to the proxy for http. */
async function viaProxy(url: URL, init: { method: string; headers: Record<string, string>; signal?: AbortSignal }, proxy: ProxyChoice): Promise<Response> {
  const toProxy = await connectToProxy(proxy, url, init.signal);
  let socket: net.Socket;
  const headers: Record<string, string> = { accept: '*/*', 'user-agent': 'node', ...init.headers, host: url.host, connection: 'close' };
  let path = `${url.pathname}${url.search}`;
  try {
    if (url.protocol === 'https:') {
      socket = await targetTls(await tunnel(toProxy, proxy, url, init.signal), url, init.signal);
    } else {
      socket = toProxy;
      path = url.toString();
      const auth = proxyAuthorization(proxy.url);
      if (auth) headers['proxy-authorization'] = auth;
    }
  } catch (err) {
    toProxy.destroy();
    throw err;
  }
  return new Promise<Response>((resolve, reject) => {
    const req = http.request({ method: init.method, path, headers, setHost: false, createConnection: () => socket });
    const stop = onAbort(init.signal, (reason) => {
      req.destroy(reason instanceof Error ? reason : new Error(String(reason)));
      reject(reason);
    });
    req.once('error', (err) => {
      stop();
      reject(init.signal?.aborted ? init.signal.reason : fetchFailed(err));
    });
    req.once('response', (res) => {
      if (url.protocol === 'http:' && res.statusCode === 407) {
        stop();
        res.destroy();
        reject(new ProxyError(proxy.shown, proxy.variable, url.toString(), 'answered HTTP 407 (it wants credentials: user:password@ in the proxy URL)'));
        return;
      }
      const status = res.statusCode ?? 0;
      const answer = new Headers();
      for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) answer.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string);
      const stopOnBody = onAbort(init.signal, (reason) => res.destroy(reason instanceof Error ? reason : new Error(String(reason))));
      stop();
      res.once('close', stopOnBody);
      const empty = init.method === 'HEAD' || [101, 204, 205, 304].includes(status);
      const body = empty ? null : (Readable.toWeb(decoded(res)) as ReadableStream<Uint8Array>);
      if (empty) res.resume();
      try {
        resolve(new Response(body, { status, statusText: res.statusMessage ?? '', headers: answer }));
      } catch (err) {
        res.destroy();
        reject(fetchFailed(err as Error));
      }
    });
    req.end();
  });
}

/** The body as fetch gives it: gzip, deflate and br undone. */
function decoded(res: http.IncomingMessage): Readable {
  const encoding = String(res.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? zlib.createGunzip()
      : encoding === 'deflate'
        ? zlib.createInflate()
        : encoding === 'br'
          ? zlib.createBrotliDecompress()
          : null;
  if (!decoder) return res;
  res.once('error', (err) => decoder.destroy(err));
  return res.pipe(decoder);
}
