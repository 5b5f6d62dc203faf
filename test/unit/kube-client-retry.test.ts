import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isStatus, KubeClient } from '../../src/kube/client.js';
import { createCA, issueCertificate } from '../../src/pki/index.js';

/** An HTTPS server on loopback answering with `answers` in turn (the last one from then on). */
async function server(answers: { status: number; headers?: Record<string, string>; body: unknown }[]) {
  const ca = await createCA('test-ca');
  const pair = await issueCertificate(ca, { commonName: 'apiserver', ipAddresses: ['127.0.0.1'], usages: ['server'] });
  const seen: string[] = [];
  const s = https.createServer({ cert: pair.certPem, key: pair.keyPem }, (req, res) => {
    const a = answers[Math.min(seen.length, answers.length - 1)]!;
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers });
    res.end(JSON.stringify(a.body));
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const client = new KubeClient({ server: `https://127.0.0.1:${(s.address() as AddressInfo).port}`, caPem: ca.certPem });
  return { client, seen, close: () => new Promise<void>((resolve) => (client.close(), s.close(() => resolve()))) };
}

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closing.splice(0)) await c();
});

const tooMany = (headers?: Record<string, string>) => ({
  status: 429,
  ...(headers ? { headers } : {}),
  body: { kind: 'Status', status: 'Failure', reason: 'TooManyRequests', message: 'storage is (re)initializing', code: 429 },
});

describe('a 429 from the API server', () => {
  it('with Retry-After is sent again after the time it names, as client-go does', async () => {
    const s = await server([tooMany({ 'retry-after': '0.1' }), tooMany({ 'retry-after': '0.1' }), { status: 200, body: { items: [] } }]);
    closing.push(s.close);
    expect(await s.client.request('GET', '/api/v1/pods')).toEqual({ items: [] });
    expect(s.seen).toEqual(['GET /api/v1/pods', 'GET /api/v1/pods', 'GET /api/v1/pods']);
  });

  it('without Retry-After, or still after 10 tries, is the error it is', async () => {
    const bare = await server([tooMany()]);
    closing.push(bare.close);
    await expect(bare.client.request('GET', '/x')).rejects.toSatisfy((err: unknown) => isStatus(err, 429));
    expect(bare.seen).toHaveLength(1);
    const always = await server([tooMany({ 'retry-after': '0.1' })]);
    closing.push(always.close);
    await expect(always.client.request('GET', '/x')).rejects.toThrow(/429 TooManyRequests: storage is \(re\)initializing/);
    expect(always.seen).toHaveLength(10);
  });
});
