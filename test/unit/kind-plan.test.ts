import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { OCM_LAB_IMAGE } from '../../src/images/catalogue.js';
import { defaultLabConfig, parseLabConfig, type LabConfig } from '../../src/config/index.js';
import { InvalidInputError } from '../../src/errors.js';
import { renderKindPlan } from '../../src/runtime/kind/dry-run.js';
import { readKindTemplates, renderKindConfig } from '../../src/runtime/kind/kind-config.js';
import { clusterCreateConcurrency, planKindLab, POD_SUBNET, SERVICE_SUBNET, type KindLabPlan } from '../../src/runtime/kind/plan.js';
import { kindReshapeRefusal } from '../../src/runtime/kind/state.js';
import { blackholeArgs, egressGuardsScript } from '../../src/runtime/kind/node-routes.js';
import { expectGolden } from '../support/golden.js';
import { addonVocabulary } from '../../src/addons/registry.js';

const GOLDEN = fileURLToPath(new URL('./golden/', import.meta.url));
const LABS = '/home/user/.local/state/ocm-lab/labs';

const golden = (name: string, actual: string): Promise<void> => expectGolden(name, actual, 'test/unit/kind-plan.test.ts');

async function plan(config: LabConfig): Promise<KindLabPlan> {
  return planKindLab(config, {
    labDir: path.join(LABS, config.name),
    nodeImage: `ocm-lab/kind-node:${config.kubernetesVersion}`,
    podNetwork: 'bridge',
    images: [OCM_LAB_IMAGE, OCM_LAB_IMAGE],
    templates: await readKindTemplates(),
  });
}

async function threeVpcLab(): Promise<LabConfig> {
  return parseLabConfig(await fs.readFile(path.join(GOLDEN, 'kind-three-vpcs.lab.yaml'), 'utf8'), '/labs/three.yaml', addonVocabulary());
}

describe('kind plan (--dry-run)', () => {
  it('matches the golden text and JSON for the default lab', async () => {
    const p = await plan(defaultLabConfig());
    await golden('kind-plan-default.txt', `${renderKindPlan(p)}\n`);
    await golden('kind-plan-default.json', `${JSON.stringify(p, null, 2)}\n`);
  });

  it('matches the golden text and JSON for a 3-VPC lab with network.cidr', async () => {
    const p = await plan(await threeVpcLab());
    await golden('kind-plan-three-vpcs.txt', `${renderKindPlan(p)}\n`);
    await golden('kind-plan-three-vpcs.json', `${JSON.stringify(p, null, 2)}\n`);
    await golden('kind-plan-three-vpcs-down.txt', `${renderKindPlan(p, 'down')}\n`);
  });

  it('names everything after the lab, and publishes the hub through the endpoint on every network', async () => {
    const p = await plan(defaultLabConfig());
    expect(p.networks.map((n) => n.name)).toEqual(['ocm-lab-default-vpc-1', 'ocm-lab-default-vpc-2']);
    expect(p.networks[1]!.labels).toEqual({ 'dev.ocm-lab.lab': 'default', 'dev.ocm-lab.role': 'vpc', 'dev.ocm-lab.vpc': 'vpc-2' });
    expect(p.networks.every((n) => n.subnet === null)).toBe(true);
    const hub = p.clusters.find((c) => c.hub)!;
    const spoke = p.clusters.find((c) => c.name === 'cluster1')!;
    expect(hub).toMatchObject({ kindName: 'default-hub', nodeContainer: 'default-hub-control-plane', network: 'ocm-lab-default-vpc-1' });
    expect(hub.internalServer).toBe('https://ocm-lab-default-hub-endpoint:6443');
    expect(hub.internalAddress).toBe('ocm-lab-default-hub-endpoint');
    expect(spoke.internalServer).toBe("https://<default-cluster1-control-plane's address on ocm-lab-default-vpc-2>:6443");
    expect(p.hubEndpoint.networks).toEqual(['ocm-lab-default-vpc-1', 'ocm-lab-default-vpc-2']);
    expect(p.hubEndpoint.command).toEqual([
      'ocm-lab',
      'internal',
      'vpc-gateway',
      '--forward',
      '6443=default-hub-control-plane:6443',
      '--forward',
      '8091=default-hub-control-plane:8091',
    ]);
    expect(hub.kindConfig).toContain('- ocm-lab-default-hub-endpoint');
    expect(spoke.kindConfig).not.toContain('certSANs');
    expect(p.images).toEqual([OCM_LAB_IMAGE]);
    expect(hub.blackholes).toEqual([POD_SUBNET]);
    expect(hub.rejected).toEqual([SERVICE_SUBNET]);
  });

  it('splits network.cidr into one subnet per VPC, in file order', async () => {
    const p = await plan(await threeVpcLab());
    expect(p.networks.map((n) => [n.subnet, n.gateway])).toEqual([
      ['172.30.0.0/20', '172.30.0.1'],
      ['172.30.16.0/20', '172.30.16.1'],
      ['172.30.32.0/20', '172.30.32.1'],
    ]);
  });

  it('refuses a network.cidr that overlaps the ranges inside the nodes, or one too small', async () => {
    const config = { ...defaultLabConfig(), network: { cidr: '10.96.0.0/12' } };
    await expect(plan(config)).rejects.toThrow(InvalidInputError);
    await expect(plan(config)).rejects.toThrow(/overlaps 10.96.0.0\/16/);
    await expect(plan({ ...defaultLabConfig(), network: { cidr: '192.168.7.0/25' } })).rejects.toThrow(/too small/);
  });
});

describe('kind create concurrency', () => {
  it('creates every cluster at once unless $OCM_LAB_KIND_CREATE_CONCURRENCY says fewer', () => {
    expect(clusterCreateConcurrency(3, {})).toBe(3);
    expect(clusterCreateConcurrency(0, {})).toBe(1);
    expect(clusterCreateConcurrency(3, { OCM_LAB_KIND_CREATE_CONCURRENCY: '1' })).toBe(1);
  });

  it('refuses a value that is not a whole number of clusters, naming the setting', () => {
    for (const bad of ['0', 'two', '1.5', '-1']) {
      expect(() => clusterCreateConcurrency(3, { OCM_LAB_KIND_CREATE_CONCURRENCY: bad })).toThrow(InvalidInputError);
      expect(() => clusterCreateConcurrency(3, { OCM_LAB_KIND_CREATE_CONCURRENCY: bad })).toThrow(`OCM_LAB_KIND_CREATE_CONCURRENCY=${bad}`);
    }
  });
});

describe('kind config templates', () => {
  it('render without their comment header and with every placeholder filled', async () => {
    const t = await readKindTemplates();
    const out = renderKindConfig(t.spoke, { nodeImage: 'img:1', podSubnet: '10.244.0.0/16', serviceSubnet: '10.96.0.0/16', cniConflist: '/x/cni.conflist' });
    expect(out.startsWith('kind: Cluster\n')).toBe(true);
    expect(out).not.toMatch(/\{\{|#/);
    expect(out).toContain('disableDefaultCNI: true');
    expect(out).toContain('kubeProxyMode: iptables');
    expect(out).toContain('apiServerAddress: 127.0.0.1');
  });

  it('refuse a placeholder ocm-lab does not provide', () => {
    expect(() => renderKindConfig('a: {{nodeImage}}\nb: {{ mystery }}\n', { nodeImage: 'x' })).toThrow(/\{\{mystery\}\}/);
  });
});

describe('kind lab reshaping and node routes', () => {
  it('lets spokes come and go, and refuses a new hub or new VPCs', () => {
    const a = defaultLabConfig();
    expect(kindReshapeRefusal(a, { ...a, clusters: a.clusters.filter((c) => c.name !== 'cluster2') })).toBeNull();
    expect(kindReshapeRefusal(a, { ...a, clusters: a.clusters.map((c) => ({ ...c, hub: c.name === 'cluster1' })) })).toMatch(/hub of a lab cannot change/);
    expect(kindReshapeRefusal(a, { ...a, vpcs: [...a.vpcs, { name: 'vpc-3' }] })).toMatch(/VPCs cannot be added/);
    expect(kindReshapeRefusal(a, { ...a, clusters: a.clusters.map((c) => (c.name === 'cluster1' ? { ...c, vpc: 'vpc-1' } : c)) })).toMatch(/cannot move/);
  });

  it('adds blackhole routes idempotently, below any served route', () => {
    expect(blackholeArgs('10.96.0.0/16')).toEqual(['ip', 'route', 'replace', 'blackhole', '10.96.0.0/16', 'metric', '4242']);
  });

  it('writes the guards as a boot script of the node that adds each REJECT rule only once', () => {
    const script = egressGuardsScript({ blackholes: ['10.244.0.0/16'], rejected: ['10.96.0.0/16'] });
    expect(script.split('\n')).toEqual([
      '#!/bin/sh',
      expect.stringMatching(/^# ocm-lab: /),
      'set -e',
      'ip route replace blackhole 10.244.0.0/16 metric 4242',
      ...['OUTPUT', 'FORWARD'].map((chain) => {
        const rule = `${chain} -d 10.96.0.0/16 -m comment --comment 'ocm-lab: unserved lab address' -j REJECT`;
        return `iptables -C ${rule} 2>/dev/null || iptables -A ${rule}`;
      }),
      '',
    ]);
  });
});
