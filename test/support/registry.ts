import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { execa } from 'execa';
import { waitUntil } from './wait.js';

/**
 * A real registry (Debian's `docker-registry`, i.e. distribution) on 127.0.0.1 with token
 * auth as Docker Hub and quay.io do it: every request without a token gets 401 and a Bearer
 * challenge naming a realm, served here by a small token service that signs JWTs with a key
 * whose self-signed certificate the registry trusts. Storage lives in `dir/storage`.
 */
export interface TestRegistry {
  /** `127.0.0.1:<port>`, the host a reference names. */
  host: string;
  base: string;
  /** The directory holding `docker/registry/v2/blobs/sha256/<xx>/<hex>/data`. */
  storage: string;
  /** Every scope the token service was asked for, in order, and every token it issued. */
  tokenRequests: { service: string | null; scope: string | null }[];
  issuedTokens: string[];
  pushBlob(repository: string, bytes: Buffer): Promise<{ digest: string; size: number }>;
  pushManifest(repository: string, reference: string, mediaType: string, body: object): Promise<{ digest: string; size: number; bytes: Buffer }>;
  blobFile(digest: string): string;
  stop(): Promise<void>;
}

export const sha256Digest = (bytes: Buffer) => `sha256:${crypto.createHash('sha256').update(bytes).digest('hex')}`;

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

const b64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

/** Starts the registry and its token service; on any failure everything started so far is stopped again. */
export async function startRegistry(dir: string, opts: { auth?: boolean } = {}): Promise<TestRegistry> {
  const withAuth = opts.auth ?? true;
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  try {
    const port = await freePort();
    const host = `127.0.0.1:${port}`;
    const service = 'ocm-lab-test-registry';
    const issuer = 'ocm-lab-test-token-service';
    const key = path.join(dir, 'token.key');
    const cert = path.join(dir, 'token.crt');
    await execa('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=ocm-lab test token signer',
    ]);
    const privateKey = crypto.createPrivateKey(await fs.readFile(key));
    const certDer = new crypto.X509Certificate(await fs.readFile(cert)).raw;

    const tokenRequests: TestRegistry['tokenRequests'] = [];
    const issuedTokens: string[] = [];
    const sign = (scope: string | null): string => {
      const now = Math.floor(Date.now() / 1000);
      const access = (scope ?? '')
        .split(' ')
        .filter(Boolean)
        .map((s) => {
          const [type, name, actions] = s.split(':');
          return { type, name, actions: (actions ?? '').split(',') };
        });
      const header = b64url(JSON.stringify({ typ: 'JWT', alg: 'RS256', x5c: [certDer.toString('base64')] }));
      const claims = b64url(JSON.stringify({ iss: issuer, sub: '', aud: service, exp: now + 600, nbf: now - 60, iat: now, jti: crypto.randomUUID(), access }));
      const signature = crypto.sign('sha256', Buffer.from(`${header}.${claims}`), privateKey);
      return `${header}.${claims}.${b64url(signature)}`;
    };
    const tokens = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const scope = url.searchParams.get('scope');
      tokenRequests.push({ service: url.searchParams.get('service'), scope });
      const token = sign(scope);
      issuedTokens.push(token);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token, expires_in: 600 }));
    });
    await new Promise<void>((r) => tokens.listen(0, '127.0.0.1', r));
    stops.push(() => new Promise((r) => tokens.close(() => r())));
    const realm = `http://127.0.0.1:${(tokens.address() as AddressInfo).port}/token`;

    const storage = path.join(dir, 'storage');
    const config = path.join(dir, 'config.yml');
    await fs.writeFile(
      config,
      [
        'version: 0.1',
        'log: { level: warn, accesslog: { disabled: true } }',
        `storage: { filesystem: { rootdirectory: ${storage} }, delete: { enabled: true } }`,
        `http: { addr: "${host}" }`,
        ...(withAuth ? [`auth: { token: { realm: "${realm}", service: ${service}, issuer: ${issuer}, rootcertbundle: ${cert} } }`] : []),
        '',
      ].join('\n'),
    );
    let output = '';
    const child: ChildProcess = spawn('docker-registry', ['serve', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
    child.stderr?.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    stops.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    });
    await waitUntil(
      async () => {
        if (child.exitCode !== null) throw new Error(`docker-registry exited (${child.exitCode}): ${output}`);
        const res = await fetch(`http://${host}/v2/`).catch(() => null);
        return res?.status === (withAuth ? 401 : 200) ? true : undefined;
      },
      `docker-registry on ${host}`,
      15_000,
      100,
    );

    const base = `http://${host}`;
    const auth = (repository: string) => ({ authorization: `Bearer ${sign(`repository:${repository}:pull,push`)}` });
    const check = async (res: Response, what: string) => {
      if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${await res.text()}`);
      return res;
    };
    return {
      host,
      base,
      storage,
      tokenRequests,
      issuedTokens,
      async pushBlob(repository, bytes) {
        const started = await check(await fetch(`${base}/v2/${repository}/blobs/uploads/`, { method: 'POST', headers: auth(repository) }), 'start upload');
        const location = new URL(started.headers.get('location') as string, base);
        const digest = sha256Digest(bytes);
        location.searchParams.set('digest', digest);
        await check(
          await fetch(location, { method: 'PUT', headers: { ...auth(repository), 'content-type': 'application/octet-stream' }, body: bytes }),
          `upload ${digest}`,
        );
        return { digest, size: bytes.length };
      },
      async pushManifest(repository, reference, mediaType, body) {
        const bytes = Buffer.from(JSON.stringify(body));
        await check(
          await fetch(`${base}/v2/${repository}/manifests/${reference}`, {
            method: 'PUT',
            headers: { ...auth(repository), 'content-type': mediaType },
            body: bytes,
          }),
          `put manifest ${repository}:${reference}`,
        );
        return { digest: sha256Digest(bytes), size: bytes.length, bytes };
      },
      blobFile: (digest) => path.join(storage, 'docker/registry/v2/blobs/sha256', digest.slice(7, 9), digest.slice(7), 'data'),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** One layer: path → content (mode 0755); a name `dir/.wh.x` is a whiteout of `dir/x`. */
export interface TestLayer {
  files: Record<string, string>;
  gzip: boolean;
}

const OCI = {
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layer: 'application/vnd.oci.image.layer.v1.tar',
};
const DOCKER = {
  index: 'application/vnd.docker.distribution.manifest.list.v2+json',
  manifest: 'application/vnd.docker.distribution.manifest.v2+json',
  config: 'application/vnd.docker.container.image.v1+json',
  layer: 'application/vnd.docker.image.rootfs.diff.tar',
};

/** A tar of `files` made by the system tar from a scratch directory under `dir`, members written `./path`. */
async function tarOf(dir: string, files: Record<string, string>): Promise<Buffer> {
  const root = await fs.mkdtemp(path.join(dir, 'layer-'));
  try {
    for (const [name, content] of Object.entries(files)) {
      await fs.mkdir(path.dirname(path.join(root, name)), { recursive: true });
      await fs.writeFile(path.join(root, name), content, { mode: 0o755 });
    }
    const out = path.join(root, '..', `${path.basename(root)}.tar`);
    await execa('tar', ['-cf', out, '-C', root, '--owner=0', '--group=0', '.']);
    const bytes = await fs.readFile(out);
    await fs.rm(out);
    return bytes;
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
}

/**
 * Pushes an image of `layers` (bottom first) for one platform under no tag; returns its manifest's
 * descriptor (for an index) and its layers' descriptors; `docker` uses Docker's v2 schema 2 media types instead of OCI's.
 */
export async function pushImage(
  registry: TestRegistry,
  scratch: string,
  repository: string,
  opts: { layers: TestLayer[]; platform: { os: string; architecture: string; variant?: string }; docker?: boolean; labels?: Record<string, string> },
) {
  const types = opts.docker ? DOCKER : OCI;
  const { gzipSync } = await import('node:zlib');
  const layers = [];
  const diffIds = [];
  for (const layer of opts.layers) {
    const tar = await tarOf(scratch, layer.files);
    diffIds.push(sha256Digest(tar));
    const bytes = layer.gzip ? gzipSync(tar) : tar;
    const blob = await registry.pushBlob(repository, bytes);
    layers.push({ mediaType: `${types.layer}${layer.gzip ? (opts.docker ? '.gzip' : '+gzip') : ''}`, ...blob });
  }
  const config = await registry.pushBlob(
    repository,
    Buffer.from(JSON.stringify({ ...opts.platform, rootfs: { type: 'layers', diff_ids: diffIds }, config: opts.labels ? { Labels: opts.labels } : {} })),
  );
  const manifest = { schemaVersion: 2, mediaType: types.manifest, config: { mediaType: types.config, ...config }, layers };
  const pushed = await registry.pushManifest(repository, sha256Digest(Buffer.from(JSON.stringify(manifest))), types.manifest, manifest);
  return { descriptor: { mediaType: types.manifest, digest: pushed.digest, size: pushed.size, platform: opts.platform }, layers };
}

/** Tags an index (OCI, or a Docker manifest list with `docker`) over already pushed manifests. */
export function pushIndex(registry: TestRegistry, repository: string, tag: string, manifests: object[], docker = false) {
  const mediaType = docker ? DOCKER.index : OCI.index;
  return registry.pushManifest(repository, tag, mediaType, { schemaVersion: 2, mediaType, manifests });
}
