import { LabError, RegistryUnavailableError } from '../../errors.js';
import { outboundFetch } from '../../util/outbound-proxy.js';
import { describeFetchError } from '../http-file.js';
import { parseWwwAuthenticate } from './challenge.js';

/** How long a registry (or its token service, or the CDN it redirects to) may take to send response headers. */
const REGISTRY_TIMEOUT_MS = 10_000;
const MAX_REDIRECTS = 5;

/**
 * Talks the distribution API to one registry for one repository, anonymously:
 * answers a Bearer challenge by fetching a pull token from the realm it names,
 * and follows redirects (blobs are usually served by a CDN) without sending the
 * token there. The token is kept in memory only and never appears in messages.
 */
export class RegistryClient {
  private token: string | undefined;

  constructor(
    /** The registry as the reference names it; errors name this host. */
    readonly host: string,
    /** Where it answers (`https://quay.io`, a mirror, `http://127.0.0.1:5000`). */
    private readonly base: string,
    private readonly repository: string,
    private readonly opts: { signal?: AbortSignal; timeoutMs?: number } = {},
  ) {
    this.base = base.replace(/\/+$/, '');
  }

  /** GET `/v2/<repository>/<path>`; any status but 2xx is a RegistryUnavailableError naming the host. */
  async get(path: string, accept?: string): Promise<Response> {
    const url = `${this.base}/v2/${this.repository}/${path}`;
    let res = await this.send(url, accept);
    if (res.status === 401 && this.token === undefined) {
      const challenge = parseWwwAuthenticate(res.headers.get('www-authenticate') ?? '').find((c) => c.scheme === 'bearer');
      await res.body?.cancel().catch(() => undefined);
      if (!challenge?.params.realm) throw this.fail(`HTTP 401 for ${url} and no Bearer challenge to answer anonymously (the registry wants credentials)`);
      this.token = await this.fetchToken(challenge.params);
      res = await this.send(url, accept);
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw this.fail(`HTTP ${res.status} for ${url}`);
    }
    return res;
  }

  private fail(reason: string, unreachable = false): RegistryUnavailableError {
    return new RegistryUnavailableError(this.host, reason, unreachable);
  }

  /** One request, following redirects by hand so the token goes to the registry only. */
  private async send(url: string, accept?: string): Promise<Response> {
    let target = url;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const headers: Record<string, string> = {};
      if (accept) headers.accept = accept;
      if (hop === 0 && this.token) headers.authorization = `Bearer ${this.token}`;
      const res = await this.fetch(target, headers);
      const location = res.headers.get('location');
      if (![301, 302, 303, 307, 308].includes(res.status) || !location) return res;
      await res.body?.cancel().catch(() => undefined);
      target = new URL(location, target).toString();
    }
    throw this.fail(`more than ${MAX_REDIRECTS} redirects from ${url}`);
  }

  /**
   * The time limit covers the response headers only: a blob's body then streams for as long as it keeps moving.
   * Through the environment's proxy when one applies (util/outbound-proxy.ts).
   */
  private async fetch(url: string, headers: Record<string, string>): Promise<Response> {
    const timeoutMs = this.opts.timeoutMs ?? REGISTRY_TIMEOUT_MS;
    const headersDue = new AbortController();
    const timer = setTimeout(() => headersDue.abort(new DOMException('no answer', 'TimeoutError')), timeoutMs);
    const signal = this.opts.signal ? AbortSignal.any([this.opts.signal, headersDue.signal]) : headersDue.signal;
    try {
      return await outboundFetch(url, { headers, redirect: 'manual', signal });
    } catch (err) {
      this.opts.signal?.throwIfAborted();
      if (err instanceof LabError) throw err; // the proxy refused (exit 9), or its variable does not parse (exit 2)
      throw this.fail(`${new URL(url).host}: ${describeFetchError(headersDue.signal.aborted ? headersDue.signal.reason : err, timeoutMs)}`, true);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The anonymous token flow: GET realm?service=…&scope=… → `{ token }` (or `{ access_token }`). */
  private async fetchToken(params: Record<string, string>): Promise<string> {
    const realm = new URL(params.realm as string);
    if (params.service) realm.searchParams.set('service', params.service);
    realm.searchParams.set('scope', params.scope ?? `repository:${this.repository}:pull`);
    const res = await this.fetch(realm.toString(), { accept: 'application/json' });
    const where = `token service ${realm.origin}${realm.pathname}`;
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw this.fail(`${where} answered HTTP ${res.status}`);
    }
    const body = (await res.json().catch(() => ({}))) as { token?: unknown; access_token?: unknown };
    const token = typeof body.token === 'string' ? body.token : body.access_token;
    if (typeof token !== 'string' || !token) throw this.fail(`${where} sent no token`);
    return token;
  }
}
