import fs from 'node:fs';
import module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandOf, parseProxyKubectl } from '../../src/cli/argv.js';
import { enableCompileCache, nodeVerdict } from '../../src/cli/node-runtime.js';
import { allInOrder } from '../../src/util/all-in-order.js';

describe('the command line before yargs (cli/argv.ts)', () => {
  it('finds the command past global options and their values', () => {
    expect(commandOf(['up'])).toBe('up');
    expect(commandOf(['--config', 'lab.yaml', 'up'])).toBe('up');
    expect(commandOf(['-c', 'up', '-o', 'json', '-v', 'status'])).toBe('status');
    expect(commandOf(['--config=lab.yaml', 'setup'])).toBe('setup');
    expect(commandOf(['--help'])).toBeUndefined();
    expect(commandOf(['--', 'up'])).toBeUndefined();
  });

  it('reads the common proxy kubectl invocations as yargs would', () => {
    const env = {};
    expect(parseProxyKubectl(['proxy', 'kubectl', '--cluster', 'cluster1', '--sa', 'dep', '--', 'get', '--raw', '/version'], env)).toEqual({
      config: undefined,
      cluster: 'cluster1',
      sa: 'dep',
      interactive: false,
      hubKubeconfig: undefined,
      kubectlArgs: ['get', '--raw', '/version'],
    });
    expect(
      parseProxyKubectl(['-c', 'lab.yaml', '-v', 'proxy', '--cluster=c2', 'kubectl', '--sa=s', '-i', '--hub-kubeconfig', '/tmp/k', '-o', 'json'], env),
    ).toEqual({ config: 'lab.yaml', cluster: 'c2', sa: 's', interactive: true, hubKubeconfig: '/tmp/k', kubectlArgs: [] });
    // $OCM_LAB_CONFIG is the default of --config, as main.ts declares it for yargs.
    expect(parseProxyKubectl(['proxy', 'kubectl', '--cluster', 'a', '--sa', 'b'], { OCM_LAB_CONFIG: 'env.yaml' })?.config).toBe('env.yaml');
    // Everything after -- is kubectl's, options included.
    expect(parseProxyKubectl(['proxy', 'kubectl', '--cluster', 'a', '--sa', 'b', '--', '--help', '-i'], env)?.kubectlArgs).toEqual(['--help', '-i']);
  });

  it('leaves to yargs whatever it does not know for certain', () => {
    const env = {};
    const cases = [
      ['proxy', 'kubectl', '--cluster', 'a'], // --sa missing: yargs names it
      ['proxy', 'kubectl', '--cluster', 'a', '--sa', 'b', '--help'],
      ['proxy', 'kubectl', '--cluster', 'a', '--cluster', 'b', '--sa', 'c'],
      ['proxy', 'kubectl', '--cluster', '--sa', 'c'],
      ['proxy', 'kubectl', '--cluster', 'a', '--sa', 'b', '--clster', 'x'],
      ['proxy', 'kubectl', '--cluster', 'a', '--sa', 'b', 'get', 'pods'], // kubectl's arguments without --
      ['proxy', 'health', '--cluster', 'a', '--sa', 'b'],
      ['proxy', 'kubectl', '--cluster', 'a', '--sa', 'b', '-o', 'yaml'],
      ['proxy', 'kubectl', '--cluster', 'a', '--sa', 'b', '--no-interactive'],
    ];
    for (const args of cases) expect(parseProxyKubectl(args, env), args.join(' ')).toBeNull();
  });
});

describe('the Node.js the CLI runs on (cli/node-runtime.ts)', () => {
  it('supports the LTS lines, warns on 20 and refuses what would fail inside a dependency', () => {
    for (const v of ['22.12.0', '22.23.3', '24.21.0', '26.10.0', '25.1.0']) expect(nodeVerdict(v)).toEqual({ kind: 'supported' });
    const eol = nodeVerdict('20.20.2');
    expect(eol.kind).toBe('unsupported');
    expect(eol.kind === 'unsupported' && eol.message).toMatch(/v20\.20\.2 is past its end of life .*22, 24, 26.*install Node\.js 24 or 26/);
    expect(nodeVerdict('22.11.0')).toMatchObject({ kind: 'unsupported', message: expect.stringContaining('v22.11.0 is older than 22.12') });
    for (const v of ['20.18.1', '18.20.8', '16.0.0']) {
      const old = nodeVerdict(v);
      expect(old.kind, v).toBe('too-old');
      expect(old.kind === 'too-old' && `${old.message} ${old.hint}`).toContain(`this is Node.js v${v}`);
    }
  });

  it('keeps the compile cache in the lab cache directory where Node has one (≥ 22.1), and does nothing where not', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ocm-lab-cc-'));
    const node = module as { enableCompileCache?: unknown; getCompileCacheDir?: () => string | undefined };
    try {
      enableCompileCache({ OCM_LAB_CACHE_DIR: dir });
      if (node.enableCompileCache)
        expect(node.getCompileCacheDir?.()).toMatch(new RegExp(`^${path.join(dir, 'node-compile-cache')}/v${process.versions.node}-`));
      else expect(fs.readdirSync(dir)).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('makes no cache directory of its own: a command stopped by bad input leaves nothing behind', () => {
    const dir = path.join(os.tmpdir(), `ocm-lab-cc-none-${process.pid}`);
    enableCompileCache({ OCM_LAB_CACHE_DIR: dir });
    expect(fs.existsSync(dir)).toBe(false);
  });
});

describe('allInOrder', () => {
  it('runs side by side and throws the first failure in argument order, whichever settles first', async () => {
    const later = (ms: number, value: unknown, fail = false) => new Promise((resolve, reject) => setTimeout(() => (fail ? reject(value) : resolve(value)), ms));
    await expect(allInOrder([later(5, 'a'), later(1, 'b')])).resolves.toEqual(['a', 'b']);
    await expect(allInOrder([later(20, new Error('first'), true), later(1, new Error('second'), true)])).rejects.toThrow('first');
    await expect(allInOrder([later(1, 'ok'), later(5, new Error('only'), true)])).rejects.toThrow('only');
  });
});
