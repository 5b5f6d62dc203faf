#!/usr/bin/env node
// Node 24 vs Node 20: mark-compacts driven by short-lived ArrayBuffers (issue 43, item 1).
// Plain node:http2 over TLS, no grpc-js: a client uploads 512 MiB in 256 KiB writes; the server
// does what a message framer does (gathers 256 KiB, Buffer.concat, one more copy) and drops it.
// With a live heap of ~10 MB, Node 24.21 runs ~21 mark-compacts and 0 scavenges, Node 20.20 1 and ~48;
// TUNE=1 sets --scavenger-max-new-space-capacity-mb=8 --no-concurrent-array-buffer-sweeping at runtime.
//   node scripts/node24-gc-repro.mjs          (TUNE=1 to tune the server; needs openssl)
import fs from 'node:fs';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { spawn, spawnSync } from 'node:child_process';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const BYTES = 512 * 1048576;
const MESSAGE = 256 * 1024;
const WINDOW = 4 * 1048576;
const self = fileURLToPath(import.meta.url);
const [mode, dir, port] = process.argv.slice(2);

if (mode === 'server') {
  if (process.env.TUNE === '1') {
    v8.setFlagsFromString('--scavenger-max-new-space-capacity-mb=8');
    v8.setFlagsFromString('--no-concurrent-array-buffer-sweeping');
  }
  globalThis.liveHeap = Array.from({ length: 150_000 }, (_, i) => ({ i, s: `k${i}`, a: [i] }));
  let major = 0;
  let minor = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) major++;
      else if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MINOR) minor++;
    }
  }).observe({ entryTypes: ['gc'] });
  const server = http2.createSecureServer({
    cert: fs.readFileSync(`${dir}/c.pem`),
    key: fs.readFileSync(`${dir}/k.pem`),
    settings: { initialWindowSize: WINDOW },
  });
  server.on('session', (s) => s.setLocalWindowSize(WINDOW));
  server.on('stream', (stream) => {
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    let got = 0;
    let parts = [];
    let n = 0;
    stream.on('data', (d) => {
      got += d.length;
      parts.push(d);
      n += d.length;
      if (n >= MESSAGE) {
        const message = Buffer.concat(parts, n);
        const framed = Buffer.allocUnsafe(n + 5);
        message.copy(framed, 5);
        parts = [];
        n = 0;
      }
    });
    stream.on('end', () => {
      const c = process.cpuUsage(cpu0);
      const s = Number(process.hrtime.bigint() - t0) / 1e9;
      stream.respond({ ':status': 200 });
      stream.end();
      const gib = got / 2 ** 30;
      console.log(
        `${process.version} tune=${process.env.TUNE === '1' ? 1 : 0}: server CPU ${((c.user + c.system) / 1e6 / gib).toFixed(2)} s/GiB, ` +
          `${Math.round((got * 8) / s / 1e6)} Mbit/s, mark-compacts ${major}, scavenges ${minor}`,
      );
      setTimeout(() => process.exit(0), 50);
    });
  });
  server.listen(0, '127.0.0.1', () => process.send(server.address().port));
} else if (mode === 'client') {
  const session = http2.connect(`https://127.0.0.1:${port}`, {
    ca: fs.readFileSync(`${dir}/c.pem`),
    servername: 'localhost',
    settings: { initialWindowSize: WINDOW },
  });
  const req = session.request({ ':method': 'POST', ':path': '/' });
  const chunk = Buffer.alloc(MESSAGE, 0x5a);
  let sent = 0;
  const pump = () => {
    while (sent < BYTES) {
      sent += chunk.length;
      if (!req.write(chunk)) return void req.once('drain', pump);
    }
    req.end();
  };
  pump();
  req.resume();
  req.on('end', () => session.close());
} else {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'node24-gc-repro-'));
  const ssl = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      `${tmp}/k.pem`,
      '-out',
      `${tmp}/c.pem`,
    ],
    { stdio: 'ignore' },
  );
  if (ssl.status !== 0) throw new Error('openssl req failed');
  const server = spawn(process.execPath, [self, 'server', tmp], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  server.on('message', (p) => spawn(process.execPath, [self, 'client', tmp, String(p)], { stdio: 'inherit', env: { ...process.env, TUNE: '0' } }));
  server.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));
}
