import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUiServer, type UiServer } from '../../src/cli/ui-server.js';

// `ocm-lab ui`'s server with sources of its own (no lab): what it serves, and to whom.

let server: UiServer;
let base: URL;
let pictureCalls = 0;

beforeAll(async () => {
  server = await startUiServer({
    picture: async () => {
      pictureCalls++;
      return `<svg xmlns="http://www.w3.org/2000/svg"><text>lab unit ${pictureCalls}</text></svg>`;
    },
    documents: async () => [
      { name: 'alpha', title: 'Alpha <walk>', summary: 's', transcript: true },
      { name: 'beta', title: 'Beta', summary: 's', transcript: false },
    ],
    transcript: async (name) => (name === 'alpha' ? '<html>alpha transcript</html>' : null),
    events: async () => ({ hub: [{ time: '2026-01-01T00:00:00Z', type: 'Normal', reason: 'Started', object: 'Pod default/x', message: 'started' }] }),
  });
  base = new URL(server.url);
});
afterAll(async () => {
  await server?.close();
});

/** GET with a Host header of our choosing (fetch would not let a test set it). */
function get(pathAndQuery: string, host = base.host): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: base.port, path: pathAndQuery, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body }));
    });
    req.on('error', reject);
  });
}

const token = () => base.searchParams.get('token')!;

describe('ocm-lab ui: the server', () => {
  it('listens on 127.0.0.1 with a long random token in its URL', () => {
    expect(base.hostname).toBe('127.0.0.1');
    expect(token().length).toBeGreaterThanOrEqual(32);
  });

  it('serves the page, the state and the picture with the token', async () => {
    const page = await get(`/?token=${token()}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain("fetch('/api/state?token='");
    const state = await get(`/api/state?token=${token()}`);
    expect(state.type).toContain('application/json');
    const json = JSON.parse(state.body) as { picture: string; documents: { name: string }[]; events: Record<string, unknown[]> };
    expect(json.picture).toContain('<svg');
    expect(json.documents.map((d) => d.name)).toEqual(['alpha', 'beta']);
    expect(json.events.hub).toHaveLength(1);
    // Live: every poll draws the lab again (the CLI's sources cache it for a few seconds).
    const again = JSON.parse((await get(`/api/state?token=${token()}`)).body) as { picture: string };
    expect(again.picture).not.toBe(json.picture);
    expect((await get(`/picture.svg?token=${token()}`)).type).toContain('image/svg+xml');
  });

  it('serves a last transcript, and 404 for a document without one or an odd name', async () => {
    expect((await get(`/transcripts/alpha?token=${token()}`)).body).toContain('alpha transcript');
    expect((await get(`/transcripts/beta?token=${token()}`)).status).toBe(404);
    expect((await get(`/transcripts/..%2F..%2Fetc?token=${token()}`)).status).toBe(404);
  });

  it('refuses a request without the token, with a wrong one, or for another host name (DNS rebinding)', async () => {
    expect((await get('/')).status).toBe(403);
    expect((await get('/api/state?token=wrong')).status).toBe(403);
    expect((await get(`/api/state?token=${token()}x`)).status).toBe(403);
    expect((await get(`/api/state?token=${token()}`, `evil.example:${base.port}`)).status).toBe(403);
    expect((await get(`/api/state?token=${token()}`, `localhost:${base.port}`)).status).toBe(200);
  });
});

describe('a port in use', () => {
  it('is a conflict (exit 6) naming the port and what to do, not a stack', async () => {
    const taken = http.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as import('node:net').AddressInfo).port;
    try {
      const failed = await startUiServer(
        { picture: async () => '', documents: async () => [], transcript: async () => null, events: async () => ({}) },
        { port },
      ).then(
        () => null,
        (err: unknown) => err as { exitCode?: number; message: string; hint?: string },
      );
      expect(failed?.exitCode).toBe(6);
      expect(failed?.message).toBe(`--port ${port}: 127.0.0.1:${port} is in use by another program`);
      expect(failed?.hint).toContain('leave --port out');
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
