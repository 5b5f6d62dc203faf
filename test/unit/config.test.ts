import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultLabConfig, loadLabConfig, parseLabConfig, renderLabConfig } from '../../src/config/index.js';
import { ExitCode, InvalidInputError } from '../../src/errors.js';

const base = `apiVersion: ocm-lab/v1alpha1
kind: Lab
vpcs:
  - name: vpc-1
  - name: vpc-2
`;
const clusters = `clusters:
  - name: hub
    vpc: vpc-1
    hub: true
  - name: cluster1
    vpc: vpc-2
`;

function problemOf(text: string): InvalidInputError {
  try {
    parseLabConfig(text, '/labs/lab.yaml');
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as InvalidInputError).exitCode).toBe(ExitCode.invalidInput);
    return err as InvalidInputError;
  }
  throw new Error('expected the lab file to be rejected');
}

describe('lab file', () => {
  it('parses the examples; the default example equals the built-in default', async () => {
    const parsed = await loadLabConfig('examples/default-lab.yaml');
    expect({ ...parsed, source: null }).toEqual(defaultLabConfig());
    expect(parsed.source).toBe(path.resolve('examples/default-lab.yaml'));
    const three = await loadLabConfig('examples/three-spokes.yaml');
    expect(three.clusters.filter((c) => !c.hub).map((c) => c.name)).toEqual(['cluster1', 'cluster2', 'cluster3']);
  });

  it('fills defaults and round-trips through renderLabConfig', () => {
    const cfg = parseLabConfig(base + clusters, '/x.yaml');
    expect(cfg.name).toBe('default');
    expect(cfg.kubernetesVersion).toBe('v1.34.4');
    expect(cfg.clusters[1]).toEqual({ name: 'cluster1', vpc: 'vpc-2', hub: false });
    expect(parseLabConfig(renderLabConfig(cfg), '/x.yaml')).toEqual(cfg);
  });

  it('names an unknown field with its line and a suggestion', () => {
    const err = problemOf(base + clusters.replace('    vpc: vpc-2', '    vpcc: vpc-2'));
    expect(err.message).toMatch(/lab\.yaml:11: clusters\[1\]\.vpcc: unknown field; did you mean 'vpc'\?/);
    expect(err.message).toContain('clusters[1].vpc');
  });

  it('rejects duplicate and non-DNS-1123 names', () => {
    expect(problemOf(base + clusters.replace('cluster1', 'hub')).message).toContain("clusters[1].name: duplicate cluster name 'hub'");
    expect(problemOf(base.replace('vpc-2', 'vpc-1') + clusters).message).toContain("duplicate VPC name 'vpc-1'");
    const bad = problemOf(base + clusters.replace('cluster1', 'Cluster_1')).message;
    expect(bad).toContain('clusters[1].name');
    expect(bad).toContain('"Cluster_1"');
    expect(problemOf(`name: ${'a'.repeat(21)}\n` + base + clusters).message).toContain('name: must be at most 20 characters');
  });

  it('rejects a cluster in an unknown VPC, listing the known ones', () => {
    expect(problemOf(base + clusters.replace('vpc: vpc-2', 'vpc: vpc-3')).message).toContain("clusters[1].vpc: unknown VPC 'vpc-3'; known VPCs: vpc-1, vpc-2");
  });

  it('wants exactly one hub', () => {
    expect(problemOf(base + clusters.replace('    hub: true\n', '')).message).toContain('no cluster is the hub');
    const two = problemOf(base + clusters + '    hub: true\n').message;
    expect(two).toContain('2 clusters are marked hub (hub, cluster1)');
  });

  it('rejects reserved names, empty VPCs, limits, versions and bad CIDRs', () => {
    expect(problemOf(base + clusters.replace('cluster1', 'kube-system')).message).toContain("'kube-system' is reserved");
    expect(problemOf(base + '  - name: vpc-3\n' + clusters).message).toContain("VPC 'vpc-3' has no cluster");
    const many = Array.from({ length: 9 }, (_, i) => `  - name: c${i}\n    vpc: vpc-2\n`).join('');
    expect(problemOf(base + clusters + many).message).toContain('more than the 8');
    expect(problemOf('kubernetesVersion: v1.20.0\n' + base + clusters).message).toContain("'v1.20.0' is not supported; supported: v1.34.4");
    expect(problemOf('network:\n  cidr: 8.8.0.0/16\n' + base + clusters).message).toContain('must be a private range');
    expect(problemOf('network:\n  cidr: 10.213.0.0/8\n' + base + clusters).message).toContain('/16 to /24');
    expect(problemOf('network:\n  cidr: 10.213.1.0/16\n' + base + clusters).message).toContain('did you mean 10.213.0.0/16');
  });

  it('reports YAML syntax errors with line and column, and empty or wrong documents', () => {
    expect(problemOf(base + 'clusters: [\n').message).toMatch(/lab\.yaml:\d+:\d+: YAML syntax/);
    expect(problemOf('').message).toContain('the file is empty');
    expect(problemOf('- a\n- b\n').message).toContain('must be a YAML mapping');
    expect(problemOf(base.replace('kind: Lab', 'kind: Cluster') + clusters).message).toContain('kind: must be Lab');
  });

  it('reports every problem at once', () => {
    const err = problemOf(base + clusters.replace('vpc: vpc-2', 'vpc: vpc-9').replace('    hub: true\n', ''));
    expect(err.message).toContain('vpc-9');
    expect(err.message).toContain('no cluster is the hub');
  });

  it('names a missing file', async () => {
    const err = await loadLabConfig('/nonexistent/lab.yaml').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as Error).message).toContain('/nonexistent/lab.yaml: no such file');
  });

  it('ships a three-spoke example that differs from the default only in clusters and name', async () => {
    const text = await fs.readFile('examples/three-spokes.yaml', 'utf8');
    expect(text).toContain('cluster3');
  });
});
