import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../../src/util/exec.js';
import { startDockerEngine, type DockerEngine } from '../support/docker-engine.js';

/**
 * The test Docker engine harness: it starts, answers, runs a --privileged
 * container (which only works through scripts/runc-bounded where the bounding
 * set lacks a capability) from a locally imported one-binary image, and on
 * stop leaves the host's iptables, FORWARD policy, ip_forward and bridges as
 * they were. Needs root, Debian's docker.io and Go (to build the tiny binary).
 */

/** The parts of the host a Docker engine touches, comparable before and after. */
async function hostState(): Promise<{ filter: string[]; nat: string[]; ipForward: string; bridges: string[] }> {
  const rules = async (table: string) =>
    (await run('iptables-save', ['-t', table])).stdout
      .split('\n')
      .filter((l) => l.startsWith('-A ') || l.startsWith(':'))
      .map((l) => l.replace(/\[\d+:\d+\]$/, ''))
      .sort();
  const bridges = (await run('ip', ['-o', 'link', 'show', 'type', 'bridge'])).stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(': ')[1]?.split('@')[0] ?? '')
    .sort();
  return {
    filter: await rules('filter'),
    nat: await rules('nat'),
    ipForward: (await fs.readFile('/proc/sys/net/ipv4/ip_forward', 'utf8')).trim(),
    bridges,
  };
}

describe('test Docker engine (scripts/docker-engine.sh)', () => {
  let engine: DockerEngine | undefined;
  let dir: string | undefined;
  afterAll(async () => {
    await engine?.stop();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('starts, runs a privileged container from a local image, and stops leaving the host as it was', async () => {
    const before = await hostState();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-docker-engine-'));
    // The image: one static binary that prints its effective capabilities.
    await fs.writeFile(
      path.join(dir, 'main.go'),
      'package main\n\nimport (\n\t"fmt"\n\t"os"\n\t"strings"\n)\n\nfunc main() {\n\tb, _ := os.ReadFile("/proc/self/status")\n\tfor _, l := range strings.Split(string(b), "\\n") {\n\t\tif strings.HasPrefix(l, "CapEff:") {\n\t\t\tfmt.Println(strings.TrimSpace(strings.TrimPrefix(l, "CapEff:")))\n\t\t}\n\t}\n}\n',
    );
    await fs.mkdir(path.join(dir, 'rootfs'));
    await run('go', ['build', '-trimpath', '-ldflags=-s', '-o', path.join(dir, 'rootfs', 'caps'), 'main.go'], {
      cwd: dir,
      env: { ...process.env, CGO_ENABLED: '0' },
    });
    await run('tar', ['-C', path.join(dir, 'rootfs'), '-cf', path.join(dir, 'caps.tar'), 'caps']);

    engine = await startDockerEngine();
    const docker = (args: string[]) => run('docker', args, { env: engine?.env });
    expect((await docker(['version', '--format', '{{.Server.Version}}'])).stdout.trim()).toMatch(/^\d+\.\d+/);

    await docker(['import', '--change', 'ENTRYPOINT ["/caps"]', path.join(dir, 'caps.tar'), 'ocm-lab-e2e/caps:1']);
    const privileged = (await docker(['run', '--rm', '--privileged', '--network', 'none', 'ocm-lab-e2e/caps:1'])).stdout.trim();
    const bounding = /^CapBnd:\s*([0-9a-f]+)/m.exec(await fs.readFile('/proc/self/status', 'utf8'))?.[1] ?? '';
    // Privileged: CAP_SYS_ADMIN and CAP_NET_ADMIN, and nothing outside the machine's bounding set.
    const caps = BigInt(`0x${privileged}`);
    expect((caps >> 21n) & 1n).toBe(1n);
    expect((caps >> 12n) & 1n).toBe(1n);
    expect(caps & ~BigInt(`0x${bounding}`)).toBe(0n);
    // A user network with a published port makes dockerd add its bridge and rules, which stop must remove.
    await docker(['network', 'create', 'ocm-lab-e2e-net']);
    await docker(['run', '--rm', '--network', 'ocm-lab-e2e-net', '-p', '127.0.0.1::80', 'ocm-lab-e2e/caps:1']);
    await docker(['create', '--name', 'ocm-lab-e2e-left', '--network', 'ocm-lab-e2e-net', 'ocm-lab-e2e/caps:1']);

    const stopping = engine;
    engine = undefined;
    await stopping.stop();
    expect(await hostState()).toEqual(before);
  });
});
