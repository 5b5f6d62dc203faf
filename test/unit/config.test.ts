import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_ADDONS,
  MAX_CLUSTERS,
  MAX_VPCS,
  SUPPORTED_KUBERNETES_VERSIONS,
  SUPPORTED_OCM_VERSIONS,
  defaultLabConfig,
  hubCluster,
  loadLabConfig,
  parseLabConfig,
  renderLabConfig,
  spokeClusters,
  validateLabFile,
  type LabConfig,
} from '../../src/config/index.js';
import { ExitCode, InvalidInputError } from '../../src/errors.js';
import '../support/addon-vocabulary.js';
import { VALID_LAB_FILE } from '../support/lab-file.js';
import { useTempDir } from '../support/temp-dir.js';
import { addonVocabulary } from '../../src/addons/registry.js';

const FILE = '/labs/lab.yaml';

function errorOf(text: string): InvalidInputError {
  let caught: unknown;
  try {
    parseLabConfig(text, FILE, addonVocabulary());
  } catch (err) {
    caught = err;
  }
  expect(caught, 'expected the lab file to be rejected').toBeInstanceOf(InvalidInputError);
  const err = caught as InvalidInputError;
  expect(err.exitCode).toBe(ExitCode.invalidInput);
  expect(err.exitCode).toBe(2);
  expect(err.message).toMatch(new RegExp(`^invalid lab file ${FILE} \\(\\d+ problems?\\):\\n`));
  expect(err.hint).toContain('docs/lab-file.md');
  return err;
}

/** The problem lines of a rejected file, without the header. */
function problemsOf(text: string): string[] {
  return errorOf(text)
    .message.split('\n')
    .slice(1)
    .map((l) => l.trim());
}

/** Asserts one problem line: file, line number, field path, the bad value (when given) and the wording. */
function expectProblem(text: string, line: number, field: string, value: string | null, ...fragments: string[]): string {
  const prefix = `${FILE}:${line}: ${field}${value === null ? ':' : ` = ${value}:`}`;
  const lines = problemsOf(text);
  const hit = lines.find((l) => l.startsWith(prefix));
  expect(hit, `no line starting with ${prefix} in\n${lines.join('\n')}`).toBeDefined();
  for (const fragment of fragments) expect(hit).toContain(fragment);
  return hit!;
}

describe('defaults', () => {
  it('the default lab is the seed topology: hub in vpc-1, cluster1 and cluster2 in vpc-2', () => {
    const lab = defaultLabConfig();
    expect(lab).toEqual({
      name: 'default',
      kubernetesVersion: 'v1.37.2',
      kubernetesRequest: 'v1.37',
      ocmVersion: 'v1.2.1',
      network: {},
      vpcs: [{ name: 'vpc-1' }, { name: 'vpc-2' }],
      clusters: [
        { name: 'hub', vpc: 'vpc-1', hub: true },
        { name: 'cluster1', vpc: 'vpc-2', hub: false },
        { name: 'cluster2', vpc: 'vpc-2', hub: false },
      ],
      addons: [...DEFAULT_ADDONS],
      addonImplementations: {},
      source: null,
      clusterProfile: true,
    });
    expect(SUPPORTED_KUBERNETES_VERSIONS).toEqual(['v1.37.2', 'v1.36.3', 'v1.35.4', 'v1.34.4']);
    expect(SUPPORTED_OCM_VERSIONS).toEqual(['v1.3.1', 'v1.2.1']);
    expect(DEFAULT_ADDONS).toEqual(['cluster-proxy', 'managed-serviceaccount', 'cluster-gateway']);
  });

  it('returns a fresh object each time', () => {
    const a = defaultLabConfig();
    a.clusters.push({ name: 'x', vpc: 'vpc-1', hub: false });
    a.addons.push('cluster-proxy');
    a.network.cidr = '10.1.0.0/16';
    expect(defaultLabConfig().clusters).toHaveLength(3);
    expect(defaultLabConfig().addons).toEqual(['cluster-proxy', 'managed-serviceaccount', 'cluster-gateway']);
    expect(defaultLabConfig().network).toEqual({});
  });

  it('fills every omitted field: name, versions, network, addons, hub', () => {
    const lab = parseLabConfig(VALID_LAB_FILE, FILE, addonVocabulary());
    expect(lab).toEqual({ ...defaultLabConfig(), source: FILE });
    expect(lab.clusters.map((c) => c.hub)).toEqual([true, false, false]);
  });

  it('loadLabConfig() without a file is the default lab with source null (no default lab up)', async () => {
    // A default lab brought up on this machine would be read back instead: look in an empty home.
    const saved = process.env.OCM_LAB_HOME;
    process.env.OCM_LAB_HOME = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-config-home-'));
    try {
      expect(await loadLabConfig()).toEqual(defaultLabConfig());
    } finally {
      await fs.rm(process.env.OCM_LAB_HOME, { recursive: true, force: true });
      if (saved === undefined) delete process.env.OCM_LAB_HOME;
      else process.env.OCM_LAB_HOME = saved;
    }
  });

  it('hubCluster and spokeClusters split the clusters', () => {
    const lab = defaultLabConfig();
    expect(hubCluster(lab).name).toBe('hub');
    expect(spokeClusters(lab).map((c) => c.name)).toEqual(['cluster1', 'cluster2']);
    const noHub = { ...lab, clusters: lab.clusters.map((c) => ({ ...c, hub: false })) };
    expect(() => hubCluster(noHub)).toThrow(/0 hub clusters/);
  });

  it('source is the absolute path of the file; relative sources give null', async () => {
    const lab = await loadLabConfig('examples/default-lab.yaml');
    expect(lab.source).toBe(path.resolve('examples/default-lab.yaml'));
    expect(parseLabConfig(VALID_LAB_FILE, 'inline', addonVocabulary()).source).toBeNull();
  });
});

describe('examples', () => {
  it('examples/default-lab.yaml is exactly the default lab', async () => {
    const text = await fs.readFile('examples/default-lab.yaml', 'utf8');
    expect({ ...parseLabConfig(text, '/examples/default-lab.yaml', addonVocabulary()), source: null }).toEqual(defaultLabConfig());
  });

  it('examples/three-spokes.yaml has the hub in vpc-1 and three spokes in vpc-2', async () => {
    const lab = await loadLabConfig('examples/three-spokes.yaml');
    expect(hubCluster(lab)).toEqual({ name: 'hub', vpc: 'vpc-1', hub: true });
    expect(spokeClusters(lab)).toEqual(['cluster1', 'cluster2', 'cluster3'].map((name) => ({ name, vpc: 'vpc-2', hub: false })));
  });

  it('every file in examples/ is a valid lab', async () => {
    const files = (await fs.readdir('examples')).filter((f) => f.endsWith('.yaml'));
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const f of files) await expect(loadLabConfig(path.join('examples', f))).resolves.toMatchObject({ source: path.resolve('examples', f) });
  });
});

describe('round trip', () => {
  const custom: LabConfig = {
    name: 'edge-lab',
    kubernetesVersion: 'v1.34.4',
    kubernetesRequest: 'v1.34.4',
    ocmVersion: 'v1.2.1',
    network: { cidr: '192.168.40.0/24' },
    vpcs: [{ name: 'public' }, { name: 'private-a' }, { name: 'private-b' }],
    clusters: [
      { name: 'spoke-a', vpc: 'private-a', hub: false },
      { name: 'control', vpc: 'public', hub: true },
      { name: 'spoke-b', vpc: 'private-b', hub: false },
    ],
    addons: ['managed-serviceaccount', 'cluster-proxy'],
    addonImplementations: { 'cluster-proxy': 'upstream' },
    source: FILE,
    clusterProfile: false,
  };

  it.each([
    ['the default lab', { ...defaultLabConfig(), source: FILE }],
    ['a lab with every field set', custom],
  ])('renderLabConfig → parseLabConfig gives back %s', (_, lab) => {
    const text = renderLabConfig(lab);
    expect(text).toContain('apiVersion: ocm-lab/v1alpha1');
    expect(parseLabConfig(text, FILE, addonVocabulary())).toEqual(lab);
  });

  it('renders the hub flag only on the hub and omits an unset network', () => {
    const text = renderLabConfig(defaultLabConfig());
    expect(text.match(/hub: true/g)).toHaveLength(1);
    expect(text).not.toContain('hub: false');
    expect(text).not.toContain('network');
  });
});

describe('rejected files (exit code 2, file:line: field = value: what to do)', () => {
  it('unknown fields at every level, with the closest known name or the allowed ones', () => {
    expectProblem(
      VALID_LAB_FILE.replace('    vpc: vpc-2\n  - name: cluster2', '    vpcc: vpc-2\n  - name: cluster2'),
      11,
      'clusters[1].vpcc',
      null,
      "unknown field; did you mean 'vpc'?",
    );
    expectProblem(`nmae: lab\n${VALID_LAB_FILE}`, 1, 'nmae', null, "did you mean 'name'?");
    expectProblem(`network:\n  cdir: 10.213.0.0/16\n${VALID_LAB_FILE}`, 2, 'network.cdir', null, "did you mean 'cidr'?");
    expectProblem(VALID_LAB_FILE.replace('  - name: vpc-2\n', '  - name: vpc-2\n    subnet: x\n'), 6, 'vpcs[1].subnet', null, 'fields allowed here: name');
    expectProblem(`${VALID_LAB_FILE}kubernetesversion: v1.34.4\n`, 14, 'kubernetesversion', null, "did you mean 'kubernetesVersion'?");
  });

  it('wrong types name the field, the value and the type wanted', () => {
    expectProblem(VALID_LAB_FILE.replace('hub: true', 'hub: "yes"'), 9, 'clusters[0].hub', '"yes"', 'must be true or false');
    expectProblem(VALID_LAB_FILE.replace('- name: cluster1', '- name: 1234'), 10, 'clusters[1].name', '1234', 'must be a string');
    expectProblem(VALID_LAB_FILE.replace(/vpcs:\n  - name: vpc-1\n  - name: vpc-2\n/, 'vpcs: vpc-1\n'), 3, 'vpcs', '"vpc-1"', 'must be a list');
    expectProblem(`network:\n${VALID_LAB_FILE}`, 1, 'network', 'null', 'must be a mapping');
    expectProblem(`network: {cidr: 10}\n${VALID_LAB_FILE}`, 1, 'network.cidr', '10', 'must be a string');
    expectProblem(`addons: cluster-proxy\n${VALID_LAB_FILE}`, 1, 'addons', '"cluster-proxy"', 'must be a list');
  });

  it.each([
    ['Cluster1', 'upper case'],
    ['cluster_1', 'underscore'],
    ['-cluster', 'leading dash'],
    ['cluster-', 'trailing dash'],
    ['a.b', 'dot'],
  ])('a cluster name that is not a DNS-1123 label (%s: %s)', (name) => {
    expectProblem(VALID_LAB_FILE.replace('- name: cluster1', `- name: "${name}"`), 10, 'clusters[1].name', JSON.stringify(name), 'must be a DNS-1123 label');
  });

  it('names longer than 63 characters, lab names longer than 20', () => {
    const long = `c${'x'.repeat(63)}`;
    expectProblem(VALID_LAB_FILE.replace('- name: cluster1', `- name: ${long}`), 10, 'clusters[1].name', JSON.stringify(long), 'must be at most 63 characters');
    expectProblem(VALID_LAB_FILE.replace('- name: vpc-2', '- name: VPC-2'), 5, 'vpcs[1].name', '"VPC-2"', 'DNS-1123');
    expectProblem(`name: ${'a'.repeat(21)}\n${VALID_LAB_FILE}`, 1, 'name', `"${'a'.repeat(21)}"`, 'must be at most 20 characters');
    expectProblem(`name: My_Lab\n${VALID_LAB_FILE}`, 1, 'name', '"My_Lab"', 'DNS-1123');
    expect(parseLabConfig(`name: ${'a'.repeat(20)}\n${VALID_LAB_FILE}`, FILE, addonVocabulary()).name).toBe('a'.repeat(20));
  });

  it('duplicate VPC and cluster names', () => {
    expectProblem(
      VALID_LAB_FILE.replace('- name: cluster2', '- name: cluster1'),
      12,
      'clusters[2].name',
      '"cluster1"',
      'duplicate cluster name (also clusters[1])',
    );
    const dupVpc = VALID_LAB_FILE.replace('  - name: vpc-2\n', '  - name: vpc-2\n  - name: vpc-1\n');
    expectProblem(dupVpc, 6, 'vpcs[2].name', '"vpc-1"', 'duplicate VPC name (also vpcs[0])');
  });

  it('a cluster in an unknown VPC, listing the known ones', () => {
    expectProblem(
      VALID_LAB_FILE.replace('    vpc: vpc-2\n  - name: cluster2', '    vpc: vpc-3\n  - name: cluster2'),
      11,
      'clusters[1].vpc',
      '"vpc-3"',
      'unknown VPC',
      'vpc-1, vpc-2',
    );
  });

  it('a cluster without a vpc', () => {
    expectProblem(VALID_LAB_FILE.replace('    vpc: vpc-2\n  - name: cluster2', '  - name: cluster2'), 10, 'clusters[1].vpc', null, 'is required', 'VPC');
  });

  it('zero hubs, or two or more hubs (named)', () => {
    expectProblem(VALID_LAB_FILE.replace('    hub: true\n', ''), 6, 'clusters', null, 'no cluster is the hub', 'hub: true');
    expectProblem(`${VALID_LAB_FILE}    hub: true\n`, 14, 'clusters[2].hub', 'true', '2 clusters are marked hub (hub, cluster2)', 'exactly one');
    const three = VALID_LAB_FILE.replace('vpc: vpc-2\n  - name: cluster2', 'vpc: vpc-2\n    hub: true\n  - name: cluster2') + '    hub: true\n';
    expectProblem(three, 12, 'clusters[1].hub', 'true', '3 clusters are marked hub (hub, cluster1, cluster2)');
    expectProblem(VALID_LAB_FILE.replace('hub: true', 'hub: false'), 6, 'clusters', null, 'no cluster is the hub');
  });

  it('a VPC with no cluster (almost certainly a typo)', () => {
    expectProblem(
      VALID_LAB_FILE.replace('  - name: vpc-2\n', '  - name: vpc-2\n  - name: vpc-3\n'),
      6,
      'vpcs[2].name',
      '"vpc-3"',
      'VPC has no cluster',
      'remove it',
    );
  });

  it.each([
    'default',
    'kube-system',
    'kube-public',
    'kube-node-lease',
    'open-cluster-management',
    'open-cluster-management-agent',
    'open-cluster-management-hub',
  ])('the reserved cluster name %s', (name) => {
    expectProblem(VALID_LAB_FILE.replace('- name: cluster1', `- name: ${name}`), 10, 'clusters[1].name', `"${name}"`, 'is reserved', 'choose another name');
  });

  it(`more than ${MAX_CLUSTERS} clusters or ${MAX_VPCS} VPCs, saying why`, () => {
    const spokes = (n: number, vpc = 'vpc-2') => Array.from({ length: n }, (_, i) => `  - name: spoke${i}\n    vpc: ${vpc}\n`).join('');
    expectProblem(`${VALID_LAB_FILE}${spokes(58)}`, 6, 'clusters', null, '61 clusters are more than the 60', '4 VPCs of 15 clusters', 'remove 1');
    // 20 clusters, as issue 16's scale lab: no longer refused by the file.
    expect(parseLabConfig(`${VALID_LAB_FILE}${spokes(17)}`, FILE, addonVocabulary()).clusters).toHaveLength(20);
    const vpcs = (n: number) =>
      `apiVersion: ocm-lab/v1alpha1\nkind: Lab\nvpcs:\n${Array.from({ length: n }, (_, i) => `  - name: v${i}\n`).join('')}clusters:\n${Array.from({ length: n }, (_, i) => `  - name: c${i}\n    vpc: v${i}\n${i === 0 ? '    hub: true\n' : ''}`).join('')}`;
    expectProblem(vpcs(5), 3, 'vpcs', null, '5 VPCs are more than the 4', 'CPU cores');
    expect(parseLabConfig(vpcs(4), FILE, addonVocabulary()).vpcs).toHaveLength(4);
  });

  it('unsupported versions, listing the supported ones', () => {
    expectProblem(
      `kubernetesVersion: v1.20.0\n${VALID_LAB_FILE}`,
      1,
      'kubernetesVersion',
      '"v1.20.0"',
      'not a supported Kubernetes version',
      'v1.37.2, v1.36.3, v1.35.4, v1.34.4',
    );
    expectProblem(`ocmVersion: v0.13.0\n${VALID_LAB_FILE}`, 1, 'ocmVersion', '"v0.13.0"', 'not a supported OCM version', 'v1.3.1, v1.2.1');
    expectProblem(`kubernetesVersion: 1.34\n${VALID_LAB_FILE}`, 1, 'kubernetesVersion', '1.34', 'v1.34.4');
  });

  it.each([
    ['8.8.0.0/16', 'private range'],
    ['172.32.0.0/16', 'private range'],
    ['10.213.0.0/8', '/16 to /24'],
    ['10.213.0.0/25', '/16 to /24'],
    ['10.213.1.0/16', 'host bits set; use 10.213.0.0/16'],
    ['10.213.0.0', 'IPv4 CIDR'],
    ['10.300.0.0/16', 'IPv4 CIDR'],
    ['fd00::/64', 'IPv4 CIDR'],
  ])('network.cidr %s is rejected (%s)', (cidr, fragment) => {
    expectProblem(`network:\n  cidr: "${cidr}"\n${VALID_LAB_FILE}`, 2, 'network.cidr', `"${cidr}"`, fragment);
  });

  it.each(['10.213.0.0/16', '172.16.0.0/16', '172.31.255.0/24', '192.168.1.0/24'])('network.cidr %s is accepted', (cidr) => {
    expect(parseLabConfig(`network:\n  cidr: ${cidr}\n${VALID_LAB_FILE}`, FILE, addonVocabulary()).network).toEqual({ cidr });
  });

  it('addons: only known names, each once', () => {
    expect(parseLabConfig(`addons: [managed-serviceaccount, cluster-proxy]\n${VALID_LAB_FILE}`, FILE, addonVocabulary()).addons).toEqual([
      'managed-serviceaccount',
      'cluster-proxy',
    ]);
    expect(parseLabConfig(`addons: [cluster-proxy, managed-serviceaccount, cluster-gateway]\n${VALID_LAB_FILE}`, FILE, addonVocabulary()).addons).toEqual([
      'cluster-proxy',
      'managed-serviceaccount',
      'cluster-gateway',
    ]);
    expectProblem(
      `addons: [cluster-proxy, cluster-gateway]\n${VALID_LAB_FILE}`,
      1,
      'addons[1]',
      '"cluster-gateway"',
      'needs managed-serviceaccount in the same lab',
    );
    expectProblem(
      `addons: [cluster-proxy, cluster-gatway]\n${VALID_LAB_FILE}`,
      1,
      'addons[1]',
      '"cluster-gatway"',
      'cluster-proxy, managed-serviceaccount, cluster-gateway',
    );
    expectProblem(`addons: [cluster-proxy, cluster-proxy]\n${VALID_LAB_FILE}`, 1, 'addons[1]', '"cluster-proxy"', 'listed twice');
  });

  it('addons: a name or {name, implementation}; upstream only where upstream has one', () => {
    const lab = parseLabConfig(
      `addons: [{name: cluster-proxy, implementation: upstream}, {name: managed-serviceaccount}, cluster-gateway]\n${VALID_LAB_FILE}`,
      FILE,
      addonVocabulary(),
    );
    expect(lab.addons).toEqual(['cluster-proxy', 'managed-serviceaccount', 'cluster-gateway']);
    expect(lab.addonImplementations).toEqual({ 'cluster-proxy': 'upstream' });
    expect(parseLabConfig(`addons: [{name: cluster-proxy, implementation: ocm-lab}]\n${VALID_LAB_FILE}`, FILE, addonVocabulary()).addonImplementations).toEqual(
      {},
    );
    expectProblem(`addons: [{name: cluster-proxy, implementation: go}]\n${VALID_LAB_FILE}`, 1, 'addons[0].implementation', '"go"', 'ocm-lab, upstream');
    expectProblem(
      `addons: [{name: cluster-proxi}]\n${VALID_LAB_FILE}`,
      1,
      'addons[0].name',
      '"cluster-proxi"',
      'cluster-proxy, managed-serviceaccount, cluster-gateway',
    );
    expectProblem(`addons: [{name: cluster-proxy, version: x}]\n${VALID_LAB_FILE}`, 1, 'addons[0].version', null, 'unknown field');
    expectProblem(`addons: [cluster-proxy, {name: cluster-proxy}]\n${VALID_LAB_FILE}`, 1, 'addons[1].name', '"cluster-proxy"', 'listed twice');
    expectProblem(
      `addons: [cluster-proxy, managed-serviceaccount, {name: cluster-gateway, implementation: upstream}]\n${VALID_LAB_FILE}`,
      1,
      'addons[2].implementation',
      '"upstream"',
      'runs only ocm-lab',
    );
  });

  it('wrong or missing apiVersion and kind', () => {
    expectProblem(VALID_LAB_FILE.replace('ocm-lab/v1alpha1', 'ocm-lab/v1'), 1, 'apiVersion', '"ocm-lab/v1"', 'must be ocm-lab/v1alpha1');
    expectProblem(VALID_LAB_FILE.replace('kind: Lab', 'kind: Cluster'), 2, 'kind', '"Cluster"', 'must be Lab');
    expectProblem(VALID_LAB_FILE.replace('apiVersion: ocm-lab/v1alpha1\n', ''), 1, 'apiVersion', null, 'is required', 'apiVersion: ocm-lab/v1alpha1');
    expectProblem(VALID_LAB_FILE.replace(/clusters:[\s\S]*/, ''), 1, 'clusters', null, 'is required');
  });

  it('YAML syntax errors with line and column', () => {
    expect(problemsOf(`${VALID_LAB_FILE}addons: [cluster-proxy\n`)[0]).toMatch(new RegExp(`^${FILE}:\\d+:\\d+: YAML syntax error: `));
    expect(problemsOf(`${VALID_LAB_FILE}clusters: []\n`)[0]).toBe(`${FILE}:14:1: YAML syntax error: Map keys must be unique`);
    expect(problemsOf(`${VALID_LAB_FILE}  bad indent: [\n`)[0]).toMatch(/YAML syntax error/);
    expect(problemsOf(`${VALID_LAB_FILE}---\n${VALID_LAB_FILE}`)[0]).toContain('more than one YAML document');
  });

  it('aliases that expand without bound', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      ...Array.from({ length: 8 }, (_, i) => `${'bcdefghi'[i]}: &${'bcdefghi'[i]} [${Array(10).fill(`*${'abcdefgh'[i]}`).join(', ')}]`),
    ].join('\n');
    expect(problemsOf(`${bomb}\n${VALID_LAB_FILE}`)).toEqual([expect.stringContaining('cannot read the YAML')]);
  });

  it.each([
    ['an empty file', '', 'the file is empty'],
    ['only comments', '# nothing here\n\n', 'the file is empty'],
    ['a list', '- a\n- b\n', 'must be a YAML mapping'],
    ['a scalar', 'hello\n', 'must be a YAML mapping'],
  ])('%s', (_, text, fragment) => {
    expect(problemsOf(text)).toEqual([expect.stringContaining(fragment)]);
  });

  it('reports every problem together, one per line, in file order', () => {
    const text = `nmae: x
apiVersion: ocm-lab/v1alpha1
kind: Lab
vpcs:
  - name: vpc-1
  - name: vpc-9
clusters:
  - name: kube-system
    vpc: vpc-1
  - name: Cluster1
    vpc: vpc-2
    hub: maybe
`;
    const lines = problemsOf(text);
    expect(errorOf(text).message.split('\n')[0]).toBe(`invalid lab file ${FILE} (7 problems):`);
    expect(lines.map((l) => l.split(': ')[0])).toEqual([
      `${FILE}:1`, // nmae
      `${FILE}:6`, // vpc-9 has no cluster
      `${FILE}:7`, // no hub
      `${FILE}:8`, // reserved
      `${FILE}:10`, // Cluster1
      `${FILE}:11`, // vpc-2 unknown
      `${FILE}:12`, // hub: maybe
    ]);
  });
});

describe('reading files', () => {
  const tmp = useTempDir('ocm-lab-config-');

  it('a file that does not exist names the absolute path', async () => {
    const missing = path.join(tmp.path, 'nope.yaml');
    const err = await loadLabConfig(missing).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as InvalidInputError).exitCode).toBe(2);
    expect((err as Error).message).toBe(`cannot read lab file ${missing}: no such file`);
  });

  it('a directory is not a lab file', async () => {
    const err = await validateLabFile(tmp.path).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as Error).message).toBe(`cannot read lab file ${tmp.path}: it is a directory`);
  });

  it('validateLabFile reads, validates and names the absolute path in problems', async () => {
    const file = path.join(tmp.path, 'bad.yaml');
    await fs.writeFile(file, VALID_LAB_FILE.replace('hub: true', 'hub: 1'));
    const err = await validateLabFile(path.relative(process.cwd(), file)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as Error).message).toContain(`${file}:9: clusters[0].hub = 1: must be true or false`);
    const good = path.join(tmp.path, 'good.yaml');
    await fs.writeFile(good, VALID_LAB_FILE);
    expect(await validateLabFile(good)).toEqual({ ...defaultLabConfig(), source: good });
  });
});
