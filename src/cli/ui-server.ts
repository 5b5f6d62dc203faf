import { randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConflictError } from '../errors.js';

/** One event of a cluster, as the page lists it. */
export interface UiEvent {
  time: string;
  type: string;
  reason: string;
  object: string;
  message: string;
}

/** Where the page's content comes from: the CLI reads the lab; tests give their own. */
export interface UiSources {
  /** The lab's picture (status --svg). */
  picture: () => Promise<string>;
  documents: () => Promise<{ name: string; title: string; summary: string; transcript: boolean }[]>;
  /** The last HTML transcript of a document, or null when it has none. */
  transcript: (name: string) => Promise<string | null>;
  /** The latest events of each cluster, newest first. */
  events: () => Promise<Record<string, UiEvent[]>>;
}

export interface UiServer {
  /** The address to open, token included. */
  url: string;
  close: () => Promise<void>;
}

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ocm-lab</title>
<style>body{font-family:system-ui,sans-serif;margin:1rem 2rem;color:#222}h2{margin-top:1.5rem}#picture svg{max-width:100%;height:auto}
table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ddd;padding:.2rem .5rem;text-align:left;vertical-align:top}
.Warning{color:#c33}#updated{color:#777;font-size:.85em}</style></head>
<body><h1>ocm-lab</h1><p id="updated">loading…</p>
<h2>The lab</h2><div id="picture"></div>
<h2>Documents</h2><table id="documents"></table>
<h2>Events</h2><div id="events"></div>
<script>
const token = new URLSearchParams(location.search).get('token');
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'})[c]);
async function refresh() {
  try {
    const r = await fetch('/api/state?token=' + encodeURIComponent(token));
    if (!r.ok) throw new Error('HTTP ' + r.status);
    const s = await r.json();
    document.getElementById('picture').innerHTML = s.picture;
    document.getElementById('documents').innerHTML = '<tr><th>document</th><th>what it shows</th><th>last transcript</th></tr>' +
      s.documents.map((d) => '<tr><td>' + esc(d.name) + '</td><td>' + esc(d.title) + '</td><td>' +
        (d.transcript ? '<a href="/transcripts/' + encodeURIComponent(d.name) + '?token=' + encodeURIComponent(token) + '">open</a>' : '–') +
        '</td></tr>').join('');
    document.getElementById('events').innerHTML = Object.entries(s.events).map(([c, evs]) => '<h3>' + esc(c) + '</h3><table>' +
      evs.map((e) => '<tr class="' + esc(e.type) + '"><td>' + esc(e.time) + '</td><td>' + esc(e.type) + '</td><td>' + esc(e.reason) + '</td><td>' +
        esc(e.object) + '</td><td>' + esc(e.message) + '</td></tr>').join('') + '</table>').join('');
    document.getElementById('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
  } catch (err) {
    document.getElementById('updated').textContent = 'could not update: ' + err.message;
  }
}
refresh();
setInterval(refresh, 5000);
</script></body></html>
`;

function send(res: http.ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, {
    'content-type': `${type}; charset=utf-8`,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    // The page's own inline script and fetches only; the inlined SVG has no scripts of its own.
    'content-security-policy': "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:",
  });
  res.end(body);
}

/** The token of the URL, compared in constant time; and a Host that is this server (a page of another site that resolves to 127.0.0.1 is refused). */
function allowed(req: http.IncomingMessage, url: URL, token: string, port: number): boolean {
  const host = req.headers.host ?? '';
  if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) return false;
  const given = Buffer.from(url.searchParams.get('token') ?? '');
  const wanted = Buffer.from(token);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

async function route(url: URL, sources: UiSources, res: http.ServerResponse): Promise<void> {
  if (url.pathname === '/') return send(res, 200, 'text/html', PAGE);
  if (url.pathname === '/picture.svg') return send(res, 200, 'image/svg+xml', await sources.picture());
  if (url.pathname === '/api/state') {
    const [picture, documents, events] = await Promise.all([
      sources.picture().catch((err: Error) => `<p>no picture: ${err.message.replace(/[<&]/g, ' ')}</p>`),
      sources.documents(),
      sources.events().catch(() => ({})),
    ]);
    return send(res, 200, 'application/json', JSON.stringify({ picture, documents, events }));
  }
  const doc = /^\/transcripts\/([\w.-]+)$/.exec(url.pathname);
  if (doc) {
    const html = await sources.transcript(doc[1]!);
    return html === null ? send(res, 404, 'text/plain', `no transcript of ${doc[1]!}\n`) : send(res, 200, 'text/html', html);
  }
  send(res, 404, 'text/plain', 'not found\n');
}

/**
 * `ocm-lab ui`: a small page on 127.0.0.1 (a random port unless given), open only with the random
 * token of its URL: the lab's picture, refreshed every 5 s; the documents with their last
 * transcripts; each cluster's latest events.
 */
export async function startUiServer(sources: UiSources, options: { port?: number } = {}): Promise<UiServer> {
  const token = randomBytes(24).toString('base64url');
  let port = 0;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || !allowed(req, url, token, port)) return send(res, 403, 'text/plain', 'forbidden: open the URL ocm-lab ui printed\n');
    route(url, sources, res).catch((err: unknown) => send(res, 500, 'text/plain', `${(err as Error).message}\n`));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new ConflictError(`--port ${options.port}: 127.0.0.1:${options.port} is in use by another program`, {
              hint: 'give another --port, or leave --port out for a free one',
            })
          : err,
      ),
    );
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
