import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import { openSync, closeSync } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import { stringify } from 'yaml';

/** Debian's `docker-registry` package: the CNCF distribution registry. */
const REGISTRY_BINARY = '/usr/bin/docker-registry';

/** One distribution process over a storage directory: TLS on `address:443`, or plain HTTP on a loopback port. */
export interface RegistryProcess {
  /** `https://<address>` or `http://127.0.0.1:<port>`. */
  url: string;
  stop(): Promise<void>;
}

export async function requireRegistryBinary(): Promise<void> {
  await fs.access(REGISTRY_BINARY).catch(() => {
    throw new Error(`${REGISTRY_BINARY} is missing: install Debian's docker-registry package (OCM_LAB_CONNECTED=1 scripts/bootstrap.sh does, as root)`);
  });
}

/** A free TCP port on 127.0.0.1 (closed again before the registry binds it). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Fails clearly when something else already holds the address (another fixture, a stray registry). */
async function requireFree(host: string, port: number): Promise<void> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) =>
    server
      .once('error', (err: NodeJS.ErrnoException) => reject(new Error(`${host}:${port} is taken (${err.code}): is another connected-world fixture running?`)))
      .listen(port, host, resolve),
  );
  await new Promise((resolve) => server.close(resolve));
}

/** GET /v2/ until the registry answers 200 (the TLS side is checked against the test CA). */
async function waitForRegistry(url: string, ca: string | undefined, child: ChildProcess, log: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  let last = '';
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    const status = await new Promise<number>((resolve) => {
      const answered = (res: http.IncomingMessage) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      };
      const req = ca ? https.get(`${url}/v2/`, { ca, servername: 'quay.io' }, answered) : http.get(`${url}/v2/`, answered);
      req.on('error', (err) => {
        last = err.message;
        resolve(0);
      });
    });
    if (status === 200) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  const printed = await fs.readFile(log, 'utf8').catch(() => '');
  throw new Error(
    `${REGISTRY_BINARY} did not answer at ${url}/v2/ (${child.exitCode !== null ? `exited ${child.exitCode}` : last}); its log:\n${printed.slice(-3000)}`,
  );
}

/** Starts `docker-registry serve` on a config of its own; stdout and stderr go to `<dir>/<name>.log`. */
export async function startRegistry(opts: {
  dir: string;
  name: string;
  storage: string;
  listen: { host: string; port: number };
  tls?: { certFile: string; keyFile: string; caFile: string };
}): Promise<RegistryProcess> {
  const config = {
    version: 0.1,
    log: { level: 'warn', accesslog: { disabled: true } },
    storage: { filesystem: { rootdirectory: opts.storage }, delete: { enabled: true }, maintenance: { uploadpurging: { enabled: false } } },
    http: {
      addr: `${opts.listen.host}:${opts.listen.port}`,
      secret: crypto.randomBytes(16).toString('hex'),
      ...(opts.tls ? { tls: { certificate: opts.tls.certFile, key: opts.tls.keyFile } } : {}),
    },
  };
  const configFile = path.join(opts.dir, `${opts.name}.yml`);
  const log = path.join(opts.dir, `${opts.name}.log`);
  await fs.writeFile(configFile, stringify(config));
  await requireFree(opts.listen.host, opts.listen.port);
  const fd = openSync(log, 'a');
  const child = spawn(REGISTRY_BINARY, ['serve', configFile], { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  stopOnExit.add(child);
  void exited.then(() => stopOnExit.delete(child));
  const url = opts.tls ? `https://${opts.listen.host}` : `http://${opts.listen.host}:${opts.listen.port}`;
  try {
    await waitForRegistry(url, opts.tls ? await fs.readFile(opts.tls.caFile, 'utf8') : undefined, child, log);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, stop };
}

/** Registries still running when the test process ends (a crash, a timeout) are killed with it. */
const stopOnExit = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of stopOnExit) child.kill('SIGKILL');
});
