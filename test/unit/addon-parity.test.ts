import crypto from 'node:crypto';
import tls from 'node:tls';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { KubeClient } from '../../src/kube/client.js';
import { ApiError } from '../../src/kube/client.js';
import { createCA, issueCertificate } from '../../src/pki/index.js';
import { CERTIFICATE_LIFETIMES, ensureCertificateSecret, ensureSignerCA, proxyServerNames, renewalTime } from '../../src/addons/cluster-proxy/certificates.js';
import { proxyAgentManifests, proxyServerDeployment } from '../../src/addons/cluster-proxy/manifests.js';
import { defaultProxyConfiguration } from '../../src/addons/cluster-proxy/configuration.js';
import { TtlDeletions } from '../../src/addons/managed-serviceaccount/ttl.js';
import type { ManagedServiceAccount } from '../../src/addons/managed-serviceaccount/types.js';
import { startProxyServer, type ProxyServer } from '../../src/tunnel/index.js';
import { nodeTlsOptions, parseCipherSuites, tlsProfileArgs, tlsProfileFromData, tlsProfileFromFlags, TlsProfileError } from '../../src/tunnel/tls-profile.js';

const DAY_MS = 24 * 3600 * 1000;

/** Secrets in memory: the few calls certificates.ts makes (a pure-logic fake, no API semantics beyond 404). */
function secretStore(): { client: KubeClient; secrets: Map<string, { metadata?: { name: string }; data?: Record<string, string> }> } {
  const secrets = new Map<string, { metadata?: { name: string }; data?: Record<string, string> }>();
  const client = {
    async get(p: string) {
      const s = secrets.get(p);
      if (!s) throw new ApiError(404, 'NotFound', `GET ${p}: 404`);
      return s;
    },
    async post(p: string, body: { metadata: { name: string } }) {
      secrets.set(`${p}/${body.metadata.name}`, body);
      return body;
    },
    async put(p: string, body: { data?: Record<string, string> }) {
      secrets.set(p, body);
      return body;
    },
  } as unknown as KubeClient;
  return { client, secrets };
}

const lifetimeDays = (pem: string) => {
  const c = new crypto.X509Certificate(pem);
  return (new Date(c.validTo).getTime() - new Date(c.validFrom).getTime()) / DAY_MS;
};

describe('cluster-proxy certificate lifetimes (upstream: CA 10 years, every signed certificate 180 days)', () => {
  it('the signer CA lasts ten years and the server, client and agent certificates 180 days', async () => {
    const { client } = secretStore();
    const ca = await ensureSignerCA(client);
    expect(Math.round(lifetimeDays(ca.certPem))).toBe(3650);
    for (const [name, usages] of [
      ['proxy-server', ['server']],
      ['agent-server', ['server']],
      ['proxy-client', ['client']],
      ['cluster-proxy-agent-cluster1', ['client']],
    ] as const) {
      const issued = await ensureCertificateSecret(client, ca, 'ns', name, { commonName: name, usages: [...usages], ...proxyServerNames('10.0.0.1') });
      // Backdated by a few minutes for clock skew, so the span is 180 days and a little.
      expect(Math.floor(lifetimeDays(issued.certPem)), name).toBe(CERTIFICATE_LIFETIMES.leafDays);
      expect(CERTIFICATE_LIFETIMES.leafDays).toBe(180);
    }
  });

  it('renews once less than a fifth of the lifetime is left, and keeps a certificate before that', async () => {
    const start = new Date('2026-01-01T00:00:00Z');
    const end = new Date(start.getTime() + 180 * DAY_MS);
    expect(renewalTime(start, end).toISOString()).toBe(new Date(start.getTime() + 144 * DAY_MS).toISOString());
    const { client } = secretStore();
    const ca = await ensureSignerCA(client);
    const first = await ensureCertificateSecret(client, ca, 'ns', 'proxy-client', { commonName: 'proxy-client', usages: ['client'] });
    const again = await ensureCertificateSecret(client, ca, 'ns', 'proxy-client', { commonName: 'proxy-client', usages: ['client'] });
    expect(first.issued).toBe(true);
    expect(again.issued).toBe(false);
    vi.useFakeTimers({ now: Date.now() + 145 * DAY_MS, toFake: ['Date'] });
    try {
      const late = await ensureCertificateSecret(client, ca, 'ns', 'proxy-client', { commonName: 'proxy-client', usages: ['client'] });
      expect(late.issued).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('additionalSANs reach the proxy-server certificate, and a new one reissues it', async () => {
    const names = proxyServerNames('10.0.0.1', ['proxy.example.test', '192.0.2.7', ' ', 'proxy.example.test']);
    expect(names.dnsNames).toContain('proxy.example.test');
    expect(names.dnsNames.filter((n) => n === 'proxy.example.test')).toHaveLength(1);
    expect(names.ipAddresses).toEqual(['127.0.0.1', '10.0.0.1', '192.0.2.7']);
    const { client } = secretStore();
    const ca = await ensureSignerCA(client);
    const before = await ensureCertificateSecret(client, ca, 'ns', 'proxy-server', {
      commonName: 'proxy-server',
      usages: ['server'],
      ...proxyServerNames('10.0.0.1'),
    });
    const after = await ensureCertificateSecret(client, ca, 'ns', 'proxy-server', { commonName: 'proxy-server', usages: ['server'], ...names });
    expect(before.issued && after.issued).toBe(true);
    const san = new crypto.X509Certificate(after.certPem).subjectAltName ?? '';
    expect(san).toContain('DNS:proxy.example.test');
    expect(san).toContain('IP Address:192.0.2.7');
  });
});

describe('cluster-proxy configuration-generation stamp (upstream v0.10.0)', () => {
  type Deployment = {
    kind: string;
    metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
    spec: {
      selector: { matchLabels: Record<string, string> };
      template: { metadata: { labels: Record<string, string>; annotations?: Record<string, string> } };
    };
  };
  const KEY = 'proxy.open-cluster-management.io/configuration-generation';
  const configuration = (generation: number | undefined) => {
    const mpc = defaultProxyConfiguration('10.0.0.1');
    if (generation !== undefined) mpc.metadata.generation = generation;
    return mpc;
  };
  const server = (generation: number | undefined) =>
    proxyServerDeployment(configuration(generation), { tlsArgs: [], certificatesDigest: 'abc' }) as unknown as Deployment;
  const agent = (generation: number | undefined) =>
    proxyAgentManifests('cluster1', configuration(generation), { certPem: 'C', keyPem: 'K' }, 'CA').find(
      (o) => o.kind === 'Deployment',
    ) as unknown as Deployment;

  it("the proxy-server Deployment carries the ManagedProxyConfiguration's generation on its metadata (annotation and label), not on its pods", () => {
    const d = server(3);
    expect(d.metadata.annotations?.[KEY]).toBe('3');
    expect(d.metadata.labels?.[KEY]).toBe('3');
    expect(d.spec.template.metadata.annotations?.[KEY]).toBeUndefined();
    expect(d.spec.template.metadata.labels[KEY]).toBeUndefined();
    expect(d.spec.selector.matchLabels[KEY]).toBeUndefined();
    expect(server(4).metadata.annotations?.[KEY]).toBe('4');
  });

  it('the agent Deployment carries it on its metadata and its pod template, so a new generation rolls the agents', () => {
    const d = agent(3);
    expect(d.metadata.annotations?.[KEY]).toBe('3');
    expect(d.spec.template.metadata.annotations?.[KEY]).toBe('3');
    const next = agent(4);
    expect(next.metadata.annotations?.[KEY]).toBe('4');
    expect(next.spec.template.metadata.annotations?.[KEY]).toBe('4');
    expect(next.spec.selector.matchLabels[KEY]).toBeUndefined();
  });

  it('a configuration the API server has not given a generation yet stamps nothing', () => {
    expect(server(undefined).metadata.annotations).toBeUndefined();
    expect(agent(undefined).metadata.annotations).toBeUndefined();
    expect(agent(undefined).spec.template.metadata.annotations).toBeUndefined();
  });
});

describe('ocm-tls-profile', () => {
  it('reads the keys and spellings upstream defines, with TLS 1.2 as the default', () => {
    expect(tlsProfileFromData(undefined)).toEqual({ minVersion: 'VersionTLS12', cipherSuites: [] });
    expect(tlsProfileFromData({ minTLSVersion: 'TLSv1.3' }).minVersion).toBe('VersionTLS13');
    expect(
      tlsProfileFromData({ minTLSVersion: 'VersionTLS12', cipherSuites: 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, ECDHE-ECDSA-AES256-GCM-SHA384' }).cipherSuites,
    ).toEqual(['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384']);
    expect(() => tlsProfileFromData({ minTLSVersion: 'TLS1.3' })).toThrow(/minTLSVersion: "TLS1.3" is not a TLS version/);
    expect(() => parseCipherSuites('TLS_FOO,TLS_AES_128_GCM_SHA256')).toThrow(/unsupported cipher suites: TLS_FOO/);
    expect(() => tlsProfileFromFlags('VersionTLS14', undefined)).toThrow(TlsProfileError);
  });

  it('turns into anp-style flags and Node TLS options', () => {
    const p = tlsProfileFromData({ minTLSVersion: 'VersionTLS12', cipherSuites: 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256' });
    expect(tlsProfileArgs(p)).toEqual(['--tls-min-version=VersionTLS12', '--cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256']);
    expect(tlsProfileArgs(tlsProfileFromData({}))).toEqual(['--tls-min-version=VersionTLS12']);
    expect(nodeTlsOptions(p)).toEqual({
      minVersion: 'TLSv1.2',
      ciphers: 'TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:ECDHE-ECDSA-AES128-GCM-SHA256',
    });
    // As in Go, a TLS 1.3 minimum leaves the (fixed) suites alone.
    expect(nodeTlsOptions(tlsProfileFromData({ minTLSVersion: 'VersionTLS13', cipherSuites: 'TLS_AES_128_GCM_SHA256' }))).toEqual({
      minVersion: 'TLSv1.3',
      maxVersion: 'TLSv1.3',
    });
    // A context with the options is accepted by this Node/OpenSSL.
    expect(() => tls.createSecureContext(nodeTlsOptions(p))).not.toThrow();
  });

  it("the proxy-server Deployment carries the flags, before the user's additionalArgs", () => {
    const mpc = defaultProxyConfiguration('10.0.0.1');
    mpc.spec.proxyServer.additionalArgs = ['--v=2'];
    const d = proxyServerDeployment(mpc, { tlsArgs: ['--tls-min-version=VersionTLS13'], certificatesDigest: 'abc' }) as unknown as {
      spec: { strategy: { type: string }; template: { metadata: { annotations: Record<string, string> }; spec: { containers: { args: string[] }[] } } };
    };
    const args = d.spec.template.spec.containers[0]!.args;
    expect(args.slice(-2)).toEqual(['--tls-min-version=VersionTLS13', '--v=2']);
    expect(Object.values(d.spec.template.metadata.annotations)).toEqual(['abc']);
    expect(d.spec.strategy.type).toBe('Recreate');
  });

  describe('the tunnel server serves every TLS listener with the profile', () => {
    let server: ProxyServer | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    const handshake = (port: number, o: tls.ConnectionOptions) =>
      new Promise<string>((resolve, reject) => {
        const s = tls.connect({ host: '127.0.0.1', port, ...o }, () => {
          const v = s.getProtocol() ?? '';
          s.destroy();
          resolve(v);
        });
        s.once('error', reject);
      });

    it('with a TLS 1.3 minimum a TLS 1.2 client is refused on the agent, gRPC and HTTP CONNECT ports; TLS 1.3 works', async () => {
      const ca = await createCA('test-ca', { validityDays: 1 });
      const serving = await issueCertificate(ca, { commonName: 'server', usages: ['server'], ipAddresses: ['127.0.0.1'], validityDays: 1 });
      const client = await issueCertificate(ca, { commonName: 'client', usages: ['client'], validityDays: 1 });
      const t = { certPem: serving.certPem, keyPem: serving.keyPem, clientCaPem: ca.certPem };
      server = await startProxyServer({
        mode: 'both',
        agent: { port: 0, tls: t },
        frontend: { port: 0, tls: t },
        httpConnect: { port: 0, tls: t },
        tlsProfile: tlsProfileFromFlags('VersionTLS13', undefined),
      });
      const creds = { ca: ca.certPem, cert: client.certPem, key: client.keyPem };
      for (const [port, alpn] of [
        [server.ports.agent, 'h2'],
        [server.ports.frontend!, 'h2'],
        [server.ports.httpConnect!, 'http/1.1'],
      ] as const) {
        await expect(handshake(port, { ...creds, ALPNProtocols: [alpn], maxVersion: 'TLSv1.2' }), `port ${port}`).rejects.toThrow(/protocol version/);
        await expect(handshake(port, { ...creds, ALPNProtocols: [alpn] })).resolves.toBe('TLSv1.3');
      }
    });

    it('by default (no profile) TLS 1.2 clients are served', async () => {
      const ca = await createCA('test-ca', { validityDays: 1 });
      const serving = await issueCertificate(ca, { commonName: 'server', usages: ['server'], ipAddresses: ['127.0.0.1'], validityDays: 1 });
      const client = await issueCertificate(ca, { commonName: 'client', usages: ['client'], validityDays: 1 });
      const t = { certPem: serving.certPem, keyPem: serving.keyPem, clientCaPem: ca.certPem };
      server = await startProxyServer({ agent: { port: 0, tls: t }, frontend: { port: 0, tls: t } });
      await expect(
        handshake(server.ports.frontend!, { ca: ca.certPem, cert: client.certPem, key: client.keyPem, ALPNProtocols: ['h2'], maxVersion: 'TLSv1.2' }),
      ).resolves.toBe('TLSv1.2');
    });
  });
});

describe('ManagedServiceAccount ttlSecondsAfterCreation: deleted on a timer at its deadline', () => {
  afterEach(() => {
    vi.useRealTimers();
  });
  const msa = (uid: string, created: string, ttl?: number): ManagedServiceAccount => ({
    apiVersion: 'authentication.open-cluster-management.io/v1beta1',
    kind: 'ManagedServiceAccount',
    metadata: { name: uid, namespace: 'cluster1', uid, creationTimestamp: created },
    spec: ttl === undefined ? {} : { ttlSecondsAfterCreation: ttl },
  });

  it('fires at creationTimestamp + TTL, not a pass later; a changed TTL moves the timer; a deleted MSA is forgotten', async () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00.300Z') });
    const deleted: { uid: string; at: number }[] = [];
    const ttl = new TtlDeletions(async (m) => void deleted.push({ uid: m.metadata.uid!, at: Date.now() }));
    ttl.observe(msa('a', '2026-01-01T00:00:00Z', 3));
    ttl.observe(msa('b', '2026-01-01T00:00:00Z', 5));
    ttl.observe(msa('c', '2026-01-01T00:00:00Z', 4));
    ttl.observe(msa('none', '2026-01-01T00:00:00Z'));
    ttl.observe(msa('b', '2026-01-01T00:00:00Z', 6));
    ttl.forget(msa('c', '2026-01-01T00:00:00Z', 4));
    expect([...ttl.scheduled().keys()].sort()).toEqual(['a', 'b']);
    await vi.advanceTimersByTimeAsync(2_699);
    expect(deleted).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(deleted).toEqual([{ uid: 'a', at: Date.parse('2026-01-01T00:00:03Z') }]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(deleted.map((d) => [d.uid, new Date(d.at).toISOString()])).toEqual([
      ['a', '2026-01-01T00:00:03.000Z'],
      ['b', '2026-01-01T00:00:06.000Z'],
    ]);
    expect(ttl.scheduled().size).toBe(0);
  });

  it('an MSA already past its deadline is deleted at once', async () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T00:01:00Z') });
    const deleted: string[] = [];
    const ttl = new TtlDeletions(async (m) => void deleted.push(m.metadata.uid!));
    ttl.observe(msa('old', '2026-01-01T00:00:00Z', 0));
    await vi.advanceTimersByTimeAsync(0);
    expect(deleted).toEqual(['old']);
  });
});
