import crypto from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import type http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** What one URL (`host` + path, no query) answers. */
type Route = { file: string } | { text: string; contentType?: string } | { redirect: string };

export interface FileServer {
  /** Serve the file named `name` (kube-apiserver, etcd-v3.7.0-linux-amd64.tar.gz, ...) with one byte changed, or none (`undefined`). */
  corrupt(name: string | undefined): void;
  stop(): Promise<void>;
}

export async function sha256File(file: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/**
 * The routes of dl.k8s.io and GitHub's etcd release download, answered the way the real ones are: dl.k8s.io
 * redirects to cdn.dl.k8s.io; github.com redirects a release asset to a signed URL on release-assets.githubusercontent.com.
 */
export class Routes {
  readonly map = new Map<string, Route>();

  /** `https://dl.k8s.io/release/<version>/bin/linux/<arch>/<name>` and its `.sha256` (the bare hex, as dl.k8s.io serves it). */
  async kubernetesBinary(version: string, arch: string, name: string, file: string): Promise<void> {
    const p = `/release/${version}/bin/linux/${arch}/${name}`;
    this.map.set(`dl.k8s.io${p}`, { redirect: `https://cdn.dl.k8s.io${p}` });
    this.map.set(`dl.k8s.io${p}.sha256`, { redirect: `https://cdn.dl.k8s.io${p}.sha256` });
    this.map.set(`cdn.dl.k8s.io${p}`, { file });
    this.map.set(`cdn.dl.k8s.io${p}.sha256`, { text: await sha256File(file) });
  }

  /** `https://github.com/<repo>/releases/download/<tag>/<name>` for each asset, plus SHA256SUMS listing them. */
  async githubRelease(repo: string, tag: string, assets: string[]): Promise<void> {
    const sums: string[] = [];
    const asset = (name: string, route: Route) => {
      const signed = `/github-production-release-asset/${crypto.randomInt(1e8)}/${crypto.randomUUID()}`;
      const query = `?sp=r&response-content-disposition=attachment%3B%20filename%3D${encodeURIComponent(name)}&response-content-type=application%2Foctet-stream`;
      this.map.set(`github.com/${repo}/releases/download/${tag}/${name}`, { redirect: `https://release-assets.githubusercontent.com${signed}${query}` });
      this.map.set(`release-assets.githubusercontent.com${signed}`, route);
    };
    for (const file of assets) {
      sums.push(`${await sha256File(file)}  ${path.basename(file)}`);
      asset(path.basename(file), { file });
    }
    asset('SHA256SUMS', { text: `${sums.join('\n')}\n` });
  }

  /**
   * `https://proxy.golang.org/<module>/@v/<version>.{info,mod,zip}` (the GOPROXY protocol) from the files `go mod download`
   * left in this machine's module cache (`cacheDir`, i.e. $GOMODCACHE/cache/download).
   */
  async goModule(cacheDir: string, module: string, version: string): Promise<void> {
    const escaped = module.replace(/[A-Z]/g, (c) => `!${c.toLowerCase()}`);
    for (const ext of ['info', 'mod', 'zip']) {
      const file = path.join(cacheDir, escaped, '@v', `${version}.${ext}`);
      await fs.access(file).catch(() => {
        throw new Error(`${file} is missing: the connected world serves ${module}@${version} from the Go module cache (go mod download it first)`);
      });
      this.map.set(`proxy.golang.org/${escaped}/@v/${version}.${ext}`, { file });
    }
  }
}

/** Flips one byte in the middle of the stream: same length, other sha256. */
function spoiler(size: number): Transform {
  let seen = 0;
  const at = Math.floor(size / 2);
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      if (seen <= at && at < seen + chunk.length) {
        const copy = Buffer.from(chunk);
        copy[at - seen] = (copy[at - seen] ?? 0) ^ 0xff;
        chunk = copy;
      }
      seen += chunk.length;
      done(null, chunk);
    },
  });
}

/** Node's https on `address`:443 with one certificate naming every file host. */
export async function startFileServer(routes: Routes, tls: { certPem: string; keyPem: string }, address: string): Promise<FileServer> {
  let corrupted: string | undefined;
  const answer = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const url = new URL(req.url ?? '/', `https://${host}`);
    const route = routes.map.get(`${host}${url.pathname}`);
    if (!route) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      return;
    }
    if ('redirect' in route) {
      res.writeHead(302, { location: route.redirect }).end();
      return;
    }
    if ('text' in route) {
      res.writeHead(200, { 'content-type': route.contentType ?? 'text/plain', 'content-length': Buffer.byteLength(route.text) }).end(route.text);
      return;
    }
    const size = (await fs.stat(route.file)).size;
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size });
    if (req.method === 'HEAD') return void res.end();
    const spoil = corrupted !== undefined && path.basename(route.file) === corrupted;
    const body = createReadStream(route.file);
    await (spoil ? pipeline(body, spoiler(size), res) : pipeline(body, res)).catch(() => res.destroy());
  };
  const server = https.createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    answer(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(443, address, resolve));
  return {
    corrupt(name) {
      corrupted = name;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
