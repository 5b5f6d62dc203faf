import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { parseCheck } from '../../src/cli/commands/internal/test-workload.js';
import { ExitCode, LabError } from '../../src/errors.js';
import { openContainerLog } from '../../src/nodelet/container-log.js';
import { streamContainerLog } from '../../src/nodelet/cri-log.js';
import type { KubeClient } from '../../src/kube/client.js';
import { PodTokens } from '../../src/nodelet/tokens.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('nodelet-proc-', { each: true });
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

describe('container log files', () => {
  const read = async (file: string) => {
    const chunks: Buffer[] = [];
    const out = new Writable({ write: (c: Buffer, _e, cb) => (chunks.push(c), cb()) });
    await streamContainerLog(file, { follow: false, timestamps: false }, out);
    return Buffer.concat(chunks).toString('utf8');
  };

  it('writes stdout and stderr to <container>.log in CRI format and keeps the previous run as <container>.previous.log', async () => {
    const first = await openContainerLog(tmp.path, 'main');
    first.stdout.write('run one out\n');
    first.stderr.write('run one err\n');
    await first.close?.();
    expect(await fs.readFile(path.join(tmp.path, 'main.log'), 'utf8')).toMatch(/^\S+Z stdout F run one out\n\S+Z stderr F run one err\n$/);
    const second = await openContainerLog(tmp.path, 'main');
    second.stdout.write('run two\n');
    await second.close?.();
    expect(await read(path.join(tmp.path, 'main.previous.log'))).toBe('run one out\nrun one err\n');
    expect(await read(path.join(tmp.path, 'main.log'))).toBe('run two\n');
    expect((await fs.stat(path.join(tmp.path, 'main.log'))).mode & 0o777).toBe(0o600);
  });
});

describe('pod tokens', () => {
  it('requests pod-bound tokens per audience and reuses them until 80 % of their life has passed', async () => {
    const posts: { path: string; body: any }[] = [];
    const client = {
      post: async (p: string, body: unknown) => {
        posts.push({ path: p, body });
        return { status: { token: `t${posts.length}`, expirationTimestamp: '' } };
      },
    } as unknown as KubeClient;
    let now = 0;
    const tokens = new PodTokens(
      client,
      { metadata: { name: 'web', namespace: 'team', uid: 'u1' }, spec: { serviceAccountName: 'reader', containers: [] } },
      () => now,
    );
    expect(await tokens.token(undefined, 3607)).toBe('t1');
    expect(await tokens.token(undefined, 3607)).toBe('t1');
    expect(await tokens.token('vault', 600)).toBe('t2');
    expect(posts[0]?.path).toBe('/api/v1/namespaces/team/serviceaccounts/reader/token');
    expect(posts[0]?.body.spec).toEqual({
      audiences: null,
      expirationSeconds: 3607,
      boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'u1' },
    });
    expect(posts[1]?.body.spec.audiences).toEqual(['vault']);
    expect(tokens.nextRefresh()).toBe(480_000);
    now = 480_000;
    expect(await tokens.token('vault', 600)).toBe('t3');
    expect(await tokens.token(undefined, 3607)).toBe('t1');
  });
});

describe('test-workload as a container', () => {
  it('with nothing to do, runs until SIGTERM and then exits 0', async () => {
    const child = spawn(process.execPath, [path.resolve('dist/cli/main.js'), 'internal', 'test-workload'], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    for (let i = 0; i < 100 && !out.includes('started'); i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 1_000));
    expect(child.exitCode, `exited early; printed: ${out}`).toBeNull();
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out).toContain('received SIGTERM, exiting');
  });
});

describe('test-workload --check', () => {
  it('parses verb:resource[.group][/name][@namespace]', () => {
    expect(parseCheck('list:pods')).toEqual({ verb: 'list', resource: 'pods', group: '', text: 'list:pods' });
    expect(parseCheck('get:deployments.apps/web@team')).toEqual({
      verb: 'get',
      resource: 'deployments',
      group: 'apps',
      name: 'web',
      namespace: 'team',
      text: 'get:deployments.apps/web@team',
    });
  });

  it('rejects malformed checks with exit code 2', () => {
    for (const bad of ['delete:pods', 'list', 'get:pods', 'list:Pods']) {
      let err: unknown;
      try {
        parseCheck(bad);
      } catch (e) {
        err = e;
      }
      expect(err instanceof LabError && err.exitCode).toBe(ExitCode.invalidInput);
    }
  });
});
