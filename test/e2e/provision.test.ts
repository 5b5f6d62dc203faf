import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binaryStatus, DEFAULT_KUBERNETES_RELEASE, ensureBinaries, KUBERNETES_BINARIES, OCM_BINARIES } from '../../src/provision/index.js';
import { cli } from '../support/lab.js';

/**
 * Against the real cache (what `ocm-lab setup` fills; built here if it is
 * not). A `go` on PATH that records every call proves warm runs never invoke
 * the Go toolchain.
 */

/** The default lab's release: what `ensureBinaries` and `setup` provision without a version. */
const { kubernetes: K8S, etcd: ETCD } = DEFAULT_KUBERNETES_RELEASE;

describe('provisioning (real binaries)', () => {
  let tmp: string;
  let marker: string;
  let shimmedPath: string;
  const savedPath = process.env.PATH;

  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-prov-e2e-'));
    marker = path.join(tmp, 'go-was-invoked');
    await fs.mkdir(path.join(tmp, 'shim'));
    await fs.writeFile(path.join(tmp, 'shim', 'go'), `#!/bin/sh\necho "go $*" >> ${JSON.stringify(marker)}\nexit 97\n`, { mode: 0o755 });
    shimmedPath = [path.join(tmp, 'shim'), savedPath].join(path.delimiter);
    await ensureBinaries([...KUBERNETES_BINARIES, ...OCM_BINARIES], { onProgress: (l) => process.stderr.write(`provision: ${l}\n`) });
  });
  afterAll(async () => {
    process.env.PATH = savedPath;
    await fs.rm(tmp, { recursive: true, force: true });
  });

  it('the go shim really stands in for go', async () => {
    const r = await execa('go', ['version'], { reject: false, env: { PATH: shimmedPath } });
    expect(r.exitCode).toBe(97);
    expect(await fs.readFile(marker, 'utf8')).toBe('go version\n');
    await fs.rm(marker);
  });

  it('returns binaries that report the pinned versions, without invoking go', async () => {
    process.env.PATH = shimmedPath;
    let found;
    try {
      found = await ensureBinaries(KUBERNETES_BINARIES);
    } finally {
      process.env.PATH = savedPath;
    }
    await expect(fs.access(marker)).rejects.toThrow();
    for (const file of Object.values(found)) expect(path.isAbsolute(file)).toBe(true);
    expect((await execa(found['kube-apiserver'], ['--version'])).stdout).toBe(`Kubernetes ${K8S}`);
    expect((await execa(found['kube-controller-manager'], ['--version'])).stdout).toBe(`Kubernetes ${K8S}`);
    expect((await execa(found.kubectl, ['version', '--client'])).stdout).toContain(`Client Version: ${K8S}`);
    expect((await execa(found.etcd, ['--version'])).stdout).toMatch(new RegExp(`^etcd Version: ${ETCD.slice(1).replace(/\./g, '\\.')}$`, 'm'));
  });

  it('OCM binaries report v1.2.1, and a full check rehashes every cached binary', async () => {
    const status = await binaryStatus({ verification: 'full' });
    expect(status.filter((s) => !s.path)).toEqual([]);
    for (const s of status.filter((x) => (OCM_BINARIES as string[]).includes(x.name))) {
      expect((await execa(s.path as string, ['--version'])).stdout).toBe(`${s.name} version v1.2.1`);
    }
  });

  it('`ocm-lab setup` on a warm cache runs no go; `setup --check` on an empty cache exits 3 naming what is missing', async () => {
    const warm = await cli(['setup'], { PATH: shimmedPath, OCM_LAB_NO_DOWNLOAD: '1' });
    expect(warm.stderr).toBe('artifacts: built here (OCM_LAB_NO_DOWNLOAD=1)\n');
    expect(warm.exitCode).toBe(0);
    expect(warm.stdout).toMatch(new RegExp(`^kube-apiserver\\s+${K8S.replace(/\./g, '\\.')}\\s+(cache|path|bin-dir)\\s+/`, 'm'));
    await expect(fs.access(marker)).rejects.toThrow();

    const empty = await cli(['setup', '--check', '-o', 'json'], { PATH: shimmedPath, OCM_LAB_CACHE_DIR: path.join(tmp, 'empty-cache') });
    expect(empty.exitCode).toBe(3);
    const rows = JSON.parse(empty.stdout) as { name: string; source: string | null }[];
    expect(rows.find((r) => r.name === 'etcd')).toMatchObject({ source: null });
    expect(empty.stderr).toContain('missing: ');
    expect(empty.stderr).toContain(`etcd ${ETCD}`);
    await expect(fs.access(marker)).rejects.toThrow();
  });
});
