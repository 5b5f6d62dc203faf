import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { upCommand } from '../../src/cli/commands/lab-commands.js';
import { defaultLabConfig } from '../../src/config/index.js';
import { planLab } from '../../src/cli/dry-run/lab-plan.js';
import { KINDEST_NODE_CNI_PLUGINS, cniConflist, conflistPlugins } from '../../src/runtime/kind/images/cni.js';
import { clusterConflist, type KindLabPlan } from '../../src/runtime/kind/plan.js';
import { nodeImageRef } from '../../src/runtime/kind/images/node-image.js';
import { officialNodeImage } from '../../src/provision/versions.js';

/**
 * Issue 38, item 1: on the official path the lab runs kind's kindest/node as kind publishes it, whose /opt/cni/bin holds
 * host-local, loopback, ptp and portmap only (docs/notes.md#what-kindestnode-holds-and-its-cni). So `up --runtime kind --artifacts official --dry-run -o json`
 * names no other CNI plugin, and mounts into a node no file that would need one.
 */

const ENV_KEYS = ['OCM_LAB_HOME', 'OCM_LAB_CACHE_DIR', 'OCM_LAB_ARTIFACTS', 'OCM_LAB_NO_DOWNLOAD', 'OCM_LAB_CONFIG', 'OCM_LAB_RUNTIME'] as const;
let dir: string;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-kind-cni-'));
  vi.stubEnv('OCM_LAB_HOME', path.join(dir, 'labs'));
  vi.stubEnv('OCM_LAB_CACHE_DIR', path.join(dir, 'cache'));
  for (const key of ENV_KEYS.slice(2)) vi.stubEnv(key, undefined);
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await fs.rm(dir, { recursive: true, force: true });
});

/** `ocm-lab <args>` through the up command's own yargs builder and handler, in this process: what stdout gets. */
async function runUp(args: string[]): Promise<string> {
  const { default: yargs } = await import('yargs');
  const out: string[] = [];
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    await yargs(args)
      .option('config', { type: 'string' })
      .option('output', { alias: 'o', choices: ['text', 'json'] as const, default: 'text' as const })
      .option('verbose', { type: 'boolean', default: false })
      .command(upCommand)
      .strict()
      .fail((msg, err) => {
        throw err ?? new Error(msg);
      })
      .parseAsync();
  } finally {
    write.mockRestore();
    stderr.mockRestore();
  }
  return out.join('');
}

/** Every file a rendered kind config mounts into a node: container path → host path. */
function mounts(kindConfig: string): Record<string, string> {
  const config = parse(kindConfig) as { nodes?: { extraMounts?: { hostPath: string; containerPath: string }[] }[] };
  return Object.fromEntries((config.nodes ?? []).flatMap((n) => n.extraMounts ?? []).map((m) => [m.containerPath, m.hostPath]));
}

/** Every plugin `type` anywhere in a conflist (main, IPAM, chained), read from the JSON rather than trusting conflistPlugins. */
function typesIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(typesIn);
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => (k === 'type' && typeof v === 'string' ? [v] : typesIn(v)));
  }
  return [];
}

function expectOnlyKindestNodePlugins(plan: KindLabPlan): void {
  const allowed: readonly string[] = KINDEST_NODE_CNI_PLUGINS;
  expect(plan.podNetwork).toBe('ptp');
  for (const c of plan.clusters) {
    expect(c.cniPlugins.filter((p) => !allowed.includes(p))).toEqual([]);
    expect(typesIn(JSON.parse(c.cniConflist)).filter((p) => !allowed.includes(p))).toEqual([]);
    // The only file mounted into the node is that conflist, where containerd reads CNI configs.
    expect(mounts(c.kindConfig)).toEqual({ '/etc/cni/net.d/10-ocm-lab.conflist': c.cniConflistFile });
    const kindConfig = parse(c.kindConfig) as { networking: { disableDefaultCNI: boolean }; containerdConfigPatches?: string[] };
    // kind's own CNI stays off: kindnet would write a conflist of its own beside ours.
    expect(kindConfig.networking.disableDefaultCNI).toBe(true);
    // The lab registry's hosts.toml are read from certs.d because the kind config says so, not the built image's containerd config.
    expect(kindConfig.containerdConfigPatches?.join('\n')).toMatch(/config_path = "\/etc\/containerd\/certs\.d"/);
  }
}

describe('kind on the official path: only the CNI plugins kindest/node ships', () => {
  it('up --runtime kind --artifacts official --dry-run -o json', async () => {
    const json = await runUp(['up', '--runtime', 'kind', '--artifacts', 'official', '--dry-run', '-o', 'json']);
    const dryRun = JSON.parse(json) as { runtime: { name: string }; plan: KindLabPlan };
    expect(dryRun.runtime.name).toBe('kind');
    const official = officialNodeImage(dryRun.plan.kubernetesVersion)!;
    expect(dryRun.plan.nodeImage).toBe(`${official.tag}@${official.digest}`);
    expect(dryRun.plan.clusters.length).toBeGreaterThan(1);
    expectOnlyKindestNodePlugins(dryRun.plan);
    // Nothing in the whole answer names the bridge plugin, the one the lab used before and kindest/node lacks.
    expect(json).not.toMatch(/bridge/);
  });

  it('OCM_LAB_ARTIFACTS=official and the lab file plan the same way; a given kindest/node too', async () => {
    const config = defaultLabConfig();
    vi.stubEnv('OCM_LAB_ARTIFACTS', 'official');
    try {
      const json = await runUp(['up', '--runtime', 'kind', '--dry-run', '-o', 'json']);
      expectOnlyKindestNodePlugins((JSON.parse(json) as { plan: KindLabPlan }).plan);
    } finally {
      vi.stubEnv('OCM_LAB_ARTIFACTS', undefined);
    }
    const fromFile = await planLab('kind', { ...config, artifacts: 'official' }, { action: 'up', artifacts: 'official' });
    expectOnlyKindestNodePlugins(fromFile.dryRun.plan as KindLabPlan);
    const given = await planLab('kind', config, { action: 'up', nodeImage: 'kindest/node:v1.37.0' });
    expectOnlyKindestNodePlugins(given.dryRun.plan as KindLabPlan);
    expect(given.text).toContain('pods attached by the ptp CNI plugin');
  });

  it('the built path keeps its bridge conflist (its node image has Debian’s full plugin set)', async () => {
    const built = (await planLab('kind', defaultLabConfig(), { action: 'up', artifacts: 'build' })).dryRun.plan as KindLabPlan;
    expect(built.nodeImage).toBe(nodeImageRef(built.kubernetesVersion));
    expect(built.podNetwork).toBe('bridge');
    expect(built.clusters.every((c) => c.cniPlugins.includes('bridge'))).toBe(true);
  });

  it('the ptp conflist: the VPC network and the service range routed, the pod range left to ptp, masqueraded, no default route', () => {
    const text = clusterConflist('ptp', { podSubnet: '10.244.0.0/16', serviceSubnet: '10.96.0.0/16' }, '172.18.0.0/16');
    const conflist = JSON.parse(text) as { plugins: { type: string; ipMasq?: boolean; ipam?: { routes: { dst: string }[] } }[] };
    expect(conflist.plugins.map((p) => p.type)).toEqual(['ptp', 'portmap']);
    expect(conflist.plugins[0]!.ipMasq).toBe(true);
    // ptp adds the pod range's route itself: given here too, it fails with "file exists" (docs/notes.md#what-kindestnode-holds-and-its-cni).
    expect(conflist.plugins[0]!.ipam!.routes).toEqual([{ dst: '10.96.0.0/16' }, { dst: '172.18.0.0/16' }]);
    expect(conflistPlugins(text)).toEqual(['host-local', 'loopback', 'portmap', 'ptp']);
    expect(JSON.parse(cniConflist('10.244.0.0/16', { network: 'ptp', extraRoutes: ['10.244.0.0/16'] })).plugins[0].ipam.routes).toEqual([
      { dst: '10.96.0.0/16' },
    ]);
  });
});
