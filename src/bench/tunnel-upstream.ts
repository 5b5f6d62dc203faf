/**
 * Upstream apiserver-network-proxy v0.36 binaries for interop tests and the
 * tunnel benchmark, built at run time from the Go module proxy (never committed).
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { cacheDir } from '../paths.js';
import { run } from '../util/exec.js';

const ANP_VERSION = 'v0.36.0';

export interface UpstreamTunnel {
  server: string;
  agent: string;
  /** Our own small Go program using konnectivity-client's single-use tunnel (like the seed-002 snippet). */
  client: string;
}

/**
 * A Go program of ours, written into the throw-away wrapper module at test time:
 * dials one target through a proxy server with konnectivity-client and either
 * echoes N random bytes (checking the SHA-256) or prints the dial error.
 */
const CLIENT_SOURCE = `package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"io"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	konnectivity "sigs.k8s.io/apiserver-network-proxy/konnectivity-client/pkg/client"
)

func main() {
	proxy := flag.String("proxy", "", "proxy server host:port")
	caFile := flag.String("ca", "", "CA of the proxy server")
	certFile := flag.String("cert", "", "client certificate")
	keyFile := flag.String("key", "", "client key")
	serverName := flag.String("servername", "localhost", "name in the proxy server certificate")
	target := flag.String("target", "", "host:port to dial through the tunnel")
	size := flag.Int("bytes", 1<<20, "bytes to echo")
	flag.Parse()
	out := json.NewEncoder(os.Stdout)
	fail := func(stage string, err error) {
		out.Encode(map[string]string{"stage": stage, "error": err.Error()})
		os.Exit(1)
	}
	ca, err := os.ReadFile(*caFile)
	if err != nil {
		fail("read-ca", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	pair, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		fail("load-cert", err)
	}
	cfg := &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, ServerName: *serverName}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tunnel, err := konnectivity.CreateSingleUseGrpcTunnel(ctx, *proxy, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	if err != nil {
		fail("tunnel", err)
	}
	conn, err := tunnel.DialContext(ctx, "tcp", *target)
	if err != nil {
		fail("dial", err)
	}
	data := make([]byte, *size)
	rand.Read(data)
	go func() { conn.Write(data) }()
	got := make([]byte, *size)
	if _, err := io.ReadFull(conn, got); err != nil {
		fail("read", err)
	}
	conn.Close()
	a, b := sha256.Sum256(data), sha256.Sum256(got)
	out.Encode(map[string]any{"bytes": *size, "match": bytes.Equal(a[:], b[:])})
}
`;

const GO_MOD = `module ocmlab.local/anpinterop

go 1.26

require (
	sigs.k8s.io/apiserver-network-proxy ${ANP_VERSION}
	sigs.k8s.io/apiserver-network-proxy/konnectivity-client ${ANP_VERSION}
)
`;

// Keeps the upstream commands' dependencies in go.mod/go.sum when tidying.
const TOOLS_SOURCE = `//go:build tools

package main

import (
	_ "sigs.k8s.io/apiserver-network-proxy/cmd/agent/app"
	_ "sigs.k8s.io/apiserver-network-proxy/cmd/server/app"
)
`;

/**
 * Builds upstream's proxy-server and proxy-agent and our Go client from the
 * Go module proxy (CGO_ENABLED=0) into <cache>/interop/anp-v0.36.0, once.
 */
export async function buildUpstreamTunnel(): Promise<UpstreamTunnel> {
  const dir = path.join(cacheDir(), 'interop', `anp-${ANP_VERSION}`);
  const bins: UpstreamTunnel = {
    server: path.join(dir, 'bin', 'proxy-server'),
    agent: path.join(dir, 'bin', 'proxy-agent'),
    client: path.join(dir, 'bin', 'konnectivity-echo'),
  };
  const clientStamp = path.join(dir, 'bin', 'konnectivity-echo.src');
  const upToDate = Object.values(bins).every((b) => fs.existsSync(b)) && fs.existsSync(clientStamp) && fs.readFileSync(clientStamp, 'utf8') === CLIENT_SOURCE;
  if (upToDate) return bins;
  const src = path.join(dir, 'src');
  fs.mkdirSync(src, { recursive: true });
  fs.writeFileSync(path.join(src, 'go.mod'), GO_MOD);
  fs.writeFileSync(path.join(src, 'main.go'), CLIENT_SOURCE);
  fs.writeFileSync(path.join(src, 'tools.go'), TOOLS_SOURCE);
  const env = { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=mod' };
  await run('go', ['mod', 'tidy'], { cwd: src, env });
  const tmp = path.join(dir, 'bin.tmp');
  fs.mkdirSync(tmp, { recursive: true });
  await run('go', ['build', '-trimpath', '-o', path.join(tmp, 'proxy-server'), 'sigs.k8s.io/apiserver-network-proxy/cmd/server'], { cwd: src, env });
  await run('go', ['build', '-trimpath', '-o', path.join(tmp, 'proxy-agent'), 'sigs.k8s.io/apiserver-network-proxy/cmd/agent'], { cwd: src, env });
  await run('go', ['build', '-trimpath', '-o', path.join(tmp, 'konnectivity-echo'), '.'], { cwd: src, env });
  fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
  for (const name of ['proxy-server', 'proxy-agent', 'konnectivity-echo']) fs.renameSync(path.join(tmp, name), path.join(dir, 'bin', name));
  fs.writeFileSync(clientStamp, CLIENT_SOURCE);
  return bins;
}

/** A free loopback port (for binaries that cannot report an ephemeral one). */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

export interface Spawned {
  proc: ResultPromise;
  output(): string;
  stop(): Promise<void>;
}

/** Starts a binary, keeps its output for error messages, and stops it with TERM then KILL. */
export function spawnBinary(file: string, args: string[]): Spawned {
  let out = '';
  const proc = execa(file, args, { reject: false, all: true, buffer: false });
  proc.all?.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.length > 200_000) out = out.slice(-100_000);
  });
  return {
    proc,
    output: () => out,
    stop: async () => {
      if (proc.exitCode !== null && proc.exitCode !== undefined) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await proc;
      clearTimeout(timer);
    },
  };
}

/** Upstream proxy-server flags, every listener on 127.0.0.1. */
export function upstreamServerArgs(o: {
  serverPort: number;
  agentPort: number;
  healthPort: number;
  adminPort: number;
  certFile: string;
  keyFile: string;
  caFile: string;
  mode?: 'grpc' | 'http-connect';
  strategies?: string;
}): string[] {
  return [
    `--mode=${o.mode ?? 'grpc'}`,
    '--server-bind-address=127.0.0.1',
    `--server-port=${o.serverPort}`,
    '--agent-bind-address=127.0.0.1',
    `--agent-port=${o.agentPort}`,
    '--health-bind-address=127.0.0.1',
    `--health-port=${o.healthPort}`,
    '--admin-bind-address=127.0.0.1',
    `--admin-port=${o.adminPort}`,
    `--server-cert=${o.certFile}`,
    `--server-key=${o.keyFile}`,
    `--server-ca-cert=${o.caFile}`,
    `--cluster-cert=${o.certFile}`,
    `--cluster-key=${o.keyFile}`,
    `--cluster-ca-cert=${o.caFile}`,
    '--server-count=1',
    `--proxy-strategies=${o.strategies ?? 'destHost,default'}`,
  ];
}

/** Upstream proxy-agent flags, health/admin on 127.0.0.1. */
export function upstreamAgentArgs(o: {
  serverPort: number;
  agentID: string;
  identifiers: string;
  healthPort: number;
  adminPort: number;
  certFile: string;
  keyFile: string;
  caFile: string;
}): string[] {
  return [
    '--proxy-server-host=127.0.0.1',
    `--proxy-server-port=${o.serverPort}`,
    `--agent-id=${o.agentID}`,
    `--agent-identifiers=${o.identifiers}`,
    `--ca-cert=${o.caFile}`,
    `--agent-cert=${o.certFile}`,
    `--agent-key=${o.keyFile}`,
    '--health-server-host=127.0.0.1',
    `--health-server-port=${o.healthPort}`,
    '--admin-bind-address=127.0.0.1',
    `--admin-server-port=${o.adminPort}`,
    '--sync-interval=200ms',
    '--sync-interval-cap=1s',
  ];
}
