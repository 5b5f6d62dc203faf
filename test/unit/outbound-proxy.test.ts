import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ExitCode, LabError, ProxyError, exitCodeOf } from '../../src/errors.js';
import { createCA, issueCertificate } from '../../src/pki/index.js';
import { decideArtifacts, httpProber } from '../../src/provision/artifacts.js';
import { DownloadUnavailable, openDownload } from '../../src/provision/download.js';
import { saveResponse } from '../../src/provision/http-file.js';
import { NO_MIRRORS } from '../../src/provision/mirrors.js';
import { RegistryClient } from '../../src/provision/oci/registry.js';
import { kindProxyEnv } from '../../src/runtime/kind/proxy-env.js';
import { runtimeDefinition } from '../../src/runtime/registry.js';
import { maskProxy, noProxyMatches, outboundFetch, parseProxy, proxyFor } from '../../src/util/outbound-proxy.js';
import { startConnectProxy, type ConnectProxy } from '../support/connect-proxy.js';
import { useTempDir } from '../support/temp-dir.js';

const url = (u: string) => new URL(u);

describe('NO_PROXY: which URLs go direct (the rules of golang.org/x/net/http/httpproxy)', () => {
  // [NO_PROXY, URL, direct?]
  const table: [string, string, boolean][] = [
    ['*', 'https://quay.io/v2/', true],
    ['', 'https://quay.io/v2/', false],
    // A name matches itself and every name below it; `.name` and `*.name` only the names below it.
    ['quay.io', 'https://quay.io/v2/', true],
    ['quay.io', 'https://cdn.quay.io/x', true],
    ['quay.io', 'https://notquay.io/x', false],
    ['.quay.io', 'https://quay.io/v2/', false],
    ['.quay.io', 'https://cdn.quay.io/x', true],
    ['*.quay.io', 'https://quay.io/v2/', false],
    ['*.quay.io', 'https://a.b.quay.io/', true],
    // Case and spaces do not matter; entries are separated by commas (or spaces).
    [' Example.COM , other.org', 'https://www.example.com/', true],
    ['a.org b.org', 'https://b.org/', true],
    // A port in the entry must be the URL's (its scheme's default when it names none).
    ['quay.io:443', 'https://quay.io/v2/', true],
    ['quay.io:8443', 'https://quay.io/v2/', false],
    ['quay.io:8443', 'https://quay.io:8443/v2/', true],
    ['example.com:80', 'http://example.com/', true],
    // IPs: equal (with an optional port), CIDRs for IP hosts only (names are not resolved), IPv6 too.
    ['10.0.0.5', 'https://10.0.0.5/', true],
    ['10.0.0.5', 'https://10.0.0.6/', false],
    ['10.0.0.5:5000', 'http://10.0.0.5:5000/v2/', true],
    ['10.0.0.5:5000', 'http://10.0.0.5:5001/v2/', false],
    ['10.0.0.0/8', 'https://10.200.3.4/', true],
    ['10.0.0.0/8', 'https://11.0.0.1/', false],
    ['10.0.0.0/8', 'https://ten.example/', false],
    ['172.16.0.0/12', 'https://172.31.255.255/', true],
    ['172.16.0.0/12', 'https://172.32.0.1/', false],
    ['fd00::/8', 'https://[fd12::1]/', true],
    ['fd00::/8', 'https://[fe80::1]/', false],
    ['2001:db8::1', 'https://[2001:db8::1]/', true],
    ['[2001:db8::1]:443', 'https://[2001:db8::1]/', true],
    ['[2001:db8::1]:80', 'https://[2001:db8::1]/', false],
    // What does not parse is passed over.
    ['10.0.0.0/99, quay.io', 'https://quay.io/', true],
    [':443', 'https://quay.io/', false],
  ];
  it.each(table)('NO_PROXY=%j, %s → direct: %s', (list, target, direct) => {
    expect(noProxyMatches(list, url(target))).toBe(direct);
  });
});

describe('one way out', () => {
  /** Files that call Node's fetch themselves, by name (a move keeps it), and why that request never leaves the machine. */
  const LAB_ONLY: Record<string, string> = {
    'push.ts': "the lab registry's manifests at http://127.0.0.1:<port>",
    'container.ts': 'the lab registry answering at http://127.0.0.1:<port>/v2/',
    'copy.ts': 'uploads to the target registry (the lab registry at http://127.0.0.1:<port>); the source goes through RegistryClient',
    'ui-server.ts': "the page's own script, in the browser, to the ui server on 127.0.0.1",
  };

  it('every other request to the outside world goes through util/outbound-proxy.ts', async () => {
    const root = path.resolve(import.meta.dirname, '../../src');
    const offenders: string[] = [];
    for (const entry of await fs.readdir(root, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name === 'outbound-proxy.ts') continue;
      const text = await fs.readFile(path.join(entry.parentPath, entry.name), 'utf8');
      const calls = text
        .split('\n')
        .filter((line) => /(^|[^.\w])fetch\(/.test(line) && !/^\s*(\*|\/\/)/.test(line) && !/(async|function)\s+fetch\(/.test(line));
      if (calls.length && !LAB_ONLY[entry.name]) offenders.push(`${path.relative(root, path.join(entry.parentPath, entry.name))}: ${calls[0]?.trim()}`);
    }
    expect(offenders, 'use outboundFetch (src/util/outbound-proxy.ts), or add the file to LAB_ONLY with the reason it never leaves the machine').toEqual([]);
  });
});

describe('which proxy a URL goes through', () => {
  it('takes https_proxy/HTTPS_PROXY for https and http_proxy/HTTP_PROXY for http; the lower-case spelling wins', () => {
    const env = { HTTPS_PROXY: 'http://upper:3128', https_proxy: 'http://lower:3128', HTTP_PROXY: 'http://plain:8080' };
    expect(proxyFor('https://quay.io/v2/', env)).toMatchObject({ variable: 'https_proxy', shown: 'http://lower:3128' });
    expect(proxyFor('http://example.com/', env)).toMatchObject({ variable: 'HTTP_PROXY', shown: 'http://plain:8080' });
    // As in Go and curl, an https URL does not use HTTP_PROXY.
    expect(proxyFor('https://quay.io/v2/', { HTTP_PROXY: 'http://plain:8080' })).toBeNull();
    expect(proxyFor('https://quay.io/v2/', { HTTPS_PROXY: 'http://upper:3128' })).toMatchObject({ variable: 'HTTPS_PROXY' });
    expect(proxyFor('https://quay.io/v2/', { https_proxy: '  ', HTTPS_PROXY: 'http://upper:3128' })).toMatchObject({ variable: 'HTTPS_PROXY' });
  });

  it('never sends loopback through a proxy, and follows NO_PROXY (lower case first)', () => {
    const env = { HTTPS_PROXY: 'http://proxy:3128', HTTP_PROXY: 'http://proxy:3128' };
    for (const u of ['http://127.0.0.1:5001/v2/', 'https://localhost:6443/', 'http://[::1]:80/', 'http://127.8.9.10/', 'http://[::ffff:127.0.0.1]/']) {
      expect(proxyFor(u, env), u).toBeNull();
    }
    expect(proxyFor('https://quay.io/v2/', { ...env, NO_PROXY: 'quay.io' })).toBeNull();
    expect(proxyFor('https://quay.io/v2/', { ...env, no_proxy: 'dl.k8s.io', NO_PROXY: 'quay.io' })).not.toBeNull();
  });

  it('reads a value without scheme as http:// (as Go does), keeps the port, and masks credentials in what it shows', () => {
    expect(parseProxy({ variable: 'HTTPS_PROXY', value: 'proxy.corp:3128' })).toMatchObject({ shown: 'http://proxy.corp:3128' });
    expect(parseProxy({ variable: 'HTTPS_PROXY', value: 'https://u:p@proxy.corp' })).toMatchObject({ shown: 'https://***@proxy.corp' });
    expect(maskProxy('http://alice:s3cret@proxy:3128')).toBe('http://***@proxy:3128');
    expect(maskProxy('alice:s3cret@proxy:3128/x@y')).toBe('***@proxy:3128/x@y');
    expect(maskProxy('http://proxy:3128')).toBe('http://proxy:3128');
  });

  it('refuses a proxy value that does not parse or is not http(s), naming the variable and the value masked (exit 2)', () => {
    const bad = (value: string) => {
      try {
        proxyFor('https://quay.io/v2/', { https_proxy: value });
      } catch (err) {
        return err as LabError;
      }
      throw new Error(`https_proxy=${value} was accepted`);
    };
    const unparsable = bad('http://alice:s3cret@proxy:port');
    expect(unparsable.exitCode).toBe(ExitCode.invalidInput);
    expect(unparsable.message).toBe('https_proxy=http://***@proxy:port: not a proxy URL');
    expect(`${unparsable.message} ${unparsable.hint}`).not.toMatch(/alice|s3cret/);
    expect(bad('socks5://proxy:1080').message).toBe('https_proxy=socks5://proxy:1080: a socks5 proxy; ocm-lab speaks to http:// and https:// proxies');
    // Not used, not judged: a loopback URL or a NO_PROXY match never reads the proxy.
    expect(proxyFor('http://127.0.0.1/', { http_proxy: 'http://[bad' })).toBeNull();
  });
});

describe('kind nodes get the proxy the CLI uses, and the lab’s own names in NO_PROXY', () => {
  const plan = {
    hubEndpoint: { name: 'ocm-lab-demo-hub-endpoint' },
    clusters: [{ nodeContainer: 'demo-hub-control-plane' }, { nodeContainer: 'demo-cluster1-control-plane' }],
  } as unknown as Parameters<typeof kindProxyEnv>[1];

  it('adds nothing without a proxy', () => {
    expect(kindProxyEnv({ NO_PROXY: 'corp.example' }, plan)).toEqual({});
  });

  it('gives the winning value under both spellings and appends the registry, the hub endpoint and the nodes to NO_PROXY', () => {
    const env = kindProxyEnv({ HTTPS_PROXY: 'http://upper:3128', https_proxy: 'http://lower:3128', NO_PROXY: 'corp.example, 10.0.0.0/8' }, plan);
    const no = 'corp.example,10.0.0.0/8,ocm-lab-registry,ocm-lab-demo-hub-endpoint,demo-hub-control-plane,demo-cluster1-control-plane,localhost,127.0.0.1';
    expect(env).toEqual({ HTTPS_PROXY: 'http://lower:3128', https_proxy: 'http://lower:3128', NO_PROXY: no, no_proxy: no });
    // containerd in a node (Go's rules) then pulls from the lab registry directly.
    expect(proxyFor('http://ocm-lab-registry:5000/v2/', { HTTP_PROXY: 'http://p:3128', NO_PROXY: no })).toBeNull();
  });
});

/** Names the test's HTTPS server answers as; the proxy resolves them all to it (nothing here resolves them otherwise). */
const NAMES = [
  'dl.example.test',
  'cdn.example.test',
  'registry.example.test',
  'auth.example.test',
  'dl.k8s.io',
  'github.com',
  'quay.io',
  'registry-1.docker.io',
];
const BLOB = crypto.randomBytes(100_000);

describe('requests to the outside world through a real CONNECT proxy', () => {
  const tmp = useTempDir('ocm-lab-outbound-proxy-');
  let server: https.Server;
  let serverPort: number;
  /** Plain HTTP, as `plain.example.test`. */
  let plain: http.Server;
  let proxy: ConnectProxy;
  const served: string[] = [];
  let defaultCAs: string[] | undefined;
  const tlsDefaults = tls as unknown as { getCACertificates?: (which: string) => string[]; setDefaultCACertificates?: (certs: string[]) => void };

  beforeAll(async () => {
    const ca = await createCA('ocm-lab outbound-proxy test CA', { validityDays: 1 });
    const cert = await issueCertificate(ca, { commonName: 'dl.example.test', dnsNames: NAMES, usages: ['server'], validityDays: 1 });
    // The test CA is trusted as a system CA would be (fetch and the tunnel's TLS both check names against the defaults).
    if (tlsDefaults.setDefaultCACertificates && tlsDefaults.getCACertificates) {
      defaultCAs = tlsDefaults.getCACertificates('default');
      tlsDefaults.setDefaultCACertificates([...defaultCAs, ca.certPem]);
    }
    server = https.createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      const host = (req.headers.host ?? '').replace(/:\d+$/, '');
      served.push(`${host}${req.url}`);
      if (host === 'dl.example.test' && req.url === '/release/tool') return void res.writeHead(302, { location: 'https://cdn.example.test/blobs/tool' }).end();
      if (host === 'cdn.example.test') return void res.writeHead(200, { 'content-length': String(BLOB.length) }).end(BLOB);
      if (host === 'registry.example.test') {
        if (req.headers.authorization !== 'Bearer t0ken') {
          return void res.writeHead(401, { 'www-authenticate': 'Bearer realm="https://auth.example.test/token",service="registry.example.test"' }).end();
        }
        return void res.writeHead(307, { location: 'https://cdn.example.test/blobs/manifest' }).end();
      }
      if (host === 'auth.example.test') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"token":"t0ken"}');
      if (req.url === '/v2/') return void res.writeHead(401).end();
      res.writeHead(200).end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    serverPort = (server.address() as AddressInfo).port;
    plain = http.createServer((req, res) => res.end(`plain ${req.headers.host}${req.url}`));
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    const plainPort = (plain.address() as AddressInfo).port;
    proxy = await startConnectProxy({ resolve: (host) => ({ host: '127.0.0.1', port: host === 'plain.example.test' ? plainPort : serverPort }) });
  });
  afterAll(async () => {
    if (defaultCAs) tlsDefaults.setDefaultCACertificates?.(defaultCAs);
    await proxy?.close();
    await new Promise((r) => server?.close(r));
    await new Promise((r) => plain?.close(r));
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    proxy.seen.length = 0;
    proxy.authorizations.length = 0;
    served.length = 0;
  });

  const trusted = () => defaultCAs !== undefined;

  it.skipIf(!tlsDefaults.setDefaultCACertificates)(
    'downloads through the proxy when HTTPS_PROXY is set: CONNECT for each host, redirects followed, the bytes intact',
    async () => {
      expect(trusted()).toBe(true);
      vi.stubEnv('HTTPS_PROXY', proxy.url);
      const file = path.join(tmp.path, 'tool');
      const res = await openDownload('https://dl.example.test/release/tool');
      const saved = await saveResponse(res, file, 'tool', () => undefined);
      expect(saved.sha256).toBe(crypto.createHash('sha256').update(BLOB).digest('hex'));
      expect(await fs.readFile(file)).toEqual(BLOB);
      expect(proxy.seen).toEqual(['dl.example.test:443', 'cdn.example.test:443']);
      expect(served).toEqual(['dl.example.test/release/tool', 'cdn.example.test/blobs/tool']);
    },
  );

  it.skipIf(!tlsDefaults.setDefaultCACertificates)('pulls from a registry through the proxy: the token service and the CDN it redirects to too', async () => {
    vi.stubEnv('https_proxy', proxy.url);
    const client = new RegistryClient('registry.example.test', 'https://registry.example.test', 'lab/tools');
    const res = await client.get('manifests/v1');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(BLOB);
    expect(proxy.seen).toEqual(['registry.example.test:443', 'auth.example.test:443', 'registry.example.test:443', 'cdn.example.test:443']);
  });

  it.skipIf(!tlsDefaults.setDefaultCACertificates)('probes the publishers through the proxy, and the decision line says so (credentials masked)', async () => {
    const withCredentials = proxy.url.replace('http://', 'http://alice:s3cret@');
    vi.stubEnv('HTTPS_PROXY', withCredentials);
    const d = await decideArtifacts({ mode: 'auto', origin: 'default' }, { sources: (await runtimeDefinition('kind')).officialSources, mirrors: NO_MIRRORS });
    expect(d.line).toBe(`artifacts: official (registries answered via proxy http://***@127.0.0.1:${proxy.port})`);
    expect(proxy.seen.sort()).toEqual(['dl.k8s.io:443', 'github.com:443', 'quay.io:443', 'registry-1.docker.io:443']);
    expect(proxy.authorizations).toContain(`Basic ${Buffer.from('alice:s3cret').toString('base64')}`);
  });

  it('goes direct for a NO_PROXY match (the proxy sees nothing)', async () => {
    const plain = http.createServer((_req, res) => res.end('direct'));
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    try {
      const port = (plain.address() as AddressInfo).port;
      // 127.0.0.2 is loopback too (always direct); a NO_PROXY CIDR sends a routable-looking address direct the same way.
      const env = { HTTP_PROXY: proxy.url, NO_PROXY: '127.0.0.0/8' };
      expect(await (await outboundFetch(`http://127.0.0.1:${port}/`, {}, env)).text()).toBe('direct');
      expect(proxyFor('http://10.1.2.3/', { ...env, NO_PROXY: '10.0.0.0/8' })).toBeNull();
      expect(proxyFor('http://10.1.2.3/', env)).not.toBeNull();
      expect(proxy.seen).toEqual([]);
    } finally {
      await new Promise((r) => plain.close(r));
    }
  });

  it('sends an http URL to the proxy in absolute form (no CONNECT), with its credentials', async () => {
    const env = { http_proxy: proxy.url.replace('http://', 'http://bob:pw@') };
    const res = await outboundFetch('http://plain.example.test/file?x=1', {}, env);
    expect(await res.text()).toBe('plain plain.example.test/file?x=1');
    expect(proxy.seen).toEqual(['http://plain.example.test/file?x=1']);
    expect(proxy.authorizations).toEqual([`Basic ${Buffer.from('bob:pw').toString('base64')}`]);
  });
});

describe('a proxy that does not do its job: one clear line, exit 9, credentials never shown', () => {
  const tmp = useTempDir('ocm-lab-outbound-proxy-bad-');

  async function closedPort(): Promise<number> {
    const s = http.createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as AddressInfo).port;
    await new Promise((r) => s.close(r));
    return port;
  }

  it('a proxy that refuses the connection stops a download, naming the proxy (masked) and the URL', async () => {
    const port = await closedPort();
    const env = { HTTPS_PROXY: `http://alice:s3cret@127.0.0.1:${port}` };
    const err = (await outboundFetch('https://dl.k8s.io/release/v1.36.3/bin/linux/amd64/kubectl', {}, env).catch((e: unknown) => e)) as ProxyError;
    expect(err).toBeInstanceOf(ProxyError);
    expect(exitCodeOf(err)).toBe(ExitCode.proxy);
    expect(err.message).toBe(
      `proxy http://***@127.0.0.1:${port} (HTTPS_PROXY) could not be reached (ECONNREFUSED), for https://dl.k8s.io/release/v1.36.3/bin/linux/amd64/kubectl`,
    );
    expect(`${err.message}\n${err.hint}`).not.toMatch(/alice|s3cret/);
    expect(err.hint).toContain('NO_PROXY');
  });

  it('openDownload passes the ProxyError on (not a DownloadUnavailable that auto would build around), and nothing is written', async () => {
    const port = await closedPort();
    vi.stubEnv('https_proxy', `http://127.0.0.1:${port}`);
    try {
      const err = await openDownload('https://dl.k8s.io/release/stable.txt').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProxyError);
      expect(err).not.toBeInstanceOf(DownloadUnavailable);
      expect(await fs.readdir(tmp.path)).toEqual([]);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('a CONNECT answered 403 or 407 is a ProxyError naming the status; the probe stops `up` with it instead of building', async () => {
    for (const answer of [403, 407]) {
      const refusing = await startConnectProxy({ answer });
      try {
        const env = { HTTPS_PROXY: refusing.url.replace('http://', 'http://carol:hunter2@') };
        const err = (await outboundFetch('https://quay.io/v2/', {}, env).catch((e: unknown) => e)) as ProxyError;
        expect(err).toBeInstanceOf(ProxyError);
        expect(err.message).toBe(
          `proxy http://***@127.0.0.1:${refusing.port} (HTTPS_PROXY) answered CONNECT quay.io:443 with HTTP ${answer} ${http.STATUS_CODES[answer]}, for https://quay.io/v2/`,
        );
        expect(err.message).not.toMatch(/carol|hunter2/);
        vi.stubEnv('HTTPS_PROXY', env.HTTPS_PROXY);
        const decided = await decideArtifacts(
          { mode: 'auto', origin: 'default' },
          { sources: (await runtimeDefinition('local')).officialSources, mirrors: NO_MIRRORS, prober: httpProber },
        ).catch((e: unknown) => e);
        expect(exitCodeOf(decided)).toBe(ExitCode.proxy);
      } finally {
        vi.unstubAllEnvs();
        await refusing.close();
      }
    }
  });

  it('a proxy that takes the connection and says nothing is a timeout like any silent host (auto may then build)', async () => {
    const silent = net.createServer((socket) => socket.on('error', () => undefined));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      vi.stubEnv('HTTPS_PROXY', `http://127.0.0.1:${(silent.address() as AddressInfo).port}`);
      expect(await httpProber('https://quay.io/v2/', 300)).toBe('no answer within 0.3 s');
    } finally {
      vi.unstubAllEnvs();
      silent.close();
    }
  });

  it('a registry pull through a refusing proxy is a ProxyError, not a RegistryUnavailableError', async () => {
    const port = await closedPort();
    vi.stubEnv('HTTPS_PROXY', `127.0.0.1:${port}`);
    try {
      const err = await new RegistryClient('quay.io', 'https://quay.io', 'open-cluster-management/registration')
        .get('manifests/v1.2.1')
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProxyError);
      expect((err as ProxyError).message).toContain(`proxy http://127.0.0.1:${port} (HTTPS_PROXY) could not be reached (ECONNREFUSED)`);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
