import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, isolatedLabHome, machineSnapshot } from '../support/lab.js';

const header = 'apiVersion: ocm-lab/v1alpha1\nkind: Lab\nname: e2e-bad\n';
const vpcs = 'vpcs:\n  - name: vpc-1\n  - name: vpc-2\n';

/** Each lab file is wrong in one way; `up` must refuse it with exit 2, name the problem, and create nothing. */
const badFiles: { name: string; text: string; mentions: string[] }[] = [
  {
    name: 'unknown field',
    text: `${header}${vpcs}clusters:\n  - name: hub\n    vpc: vpc-1\n    hub: true\n  - name: cluster1\n    vpcc: vpc-2\n`,
    mentions: ['vpcc'],
  },
  {
    name: 'duplicate cluster',
    text: `${header}${vpcs}clusters:\n  - name: hub\n    vpc: vpc-1\n    hub: true\n  - name: hub\n    vpc: vpc-2\n`,
    mentions: ['hub', 'duplicate'],
  },
  {
    name: 'not DNS-1123',
    text: `${header}${vpcs}clusters:\n  - name: hub\n    vpc: vpc-1\n    hub: true\n  - name: Cluster_1\n    vpc: vpc-2\n`,
    mentions: ['Cluster_1'],
  },
  {
    name: 'unknown VPC',
    text: `${header}${vpcs}clusters:\n  - name: hub\n    vpc: vpc-1\n    hub: true\n  - name: cluster1\n    vpc: vpc-3\n`,
    mentions: ['vpc-3'],
  },
  { name: 'no hub', text: `${header}${vpcs}clusters:\n  - name: hub\n    vpc: vpc-1\n  - name: cluster1\n    vpc: vpc-2\n`, mentions: ['hub'] },
  {
    name: 'two hubs',
    text: `${header}${vpcs}clusters:\n  - name: hub\n    vpc: vpc-1\n    hub: true\n  - name: cluster1\n    vpc: vpc-2\n    hub: true\n`,
    mentions: ['hub', 'cluster1'],
  },
];

describe('up refuses bad lab files before creating anything', () => {
  let home: Awaited<ReturnType<typeof isolatedLabHome>>;
  let before: Awaited<ReturnType<typeof machineSnapshot>>;

  beforeAll(async () => {
    home = await isolatedLabHome('bad-input');
    before = await machineSnapshot(home.home);
  });
  afterAll(async () => home.cleanup());

  for (const bad of badFiles) {
    it(`${bad.name}: exit 2 and a message naming it`, async () => {
      const file = path.join(home.home, `${bad.name.replace(/\W+/g, '-')}.yaml`);
      await fs.writeFile(file, bad.text);
      const r = await cli(['up', '--config', file], { OCM_LAB_HOME: path.join(home.home, 'labs') });
      expect(r.exitCode, r.stderr).toBe(2);
      for (const m of bad.mentions) expect(r.stderr).toContain(m);
      expect(r.stderr).toContain(file);
      await expect(fs.access(path.join(home.home, 'labs'))).rejects.toThrow();
      expect(await machineSnapshot(home.home)).toEqual(before);
    });
  }
});

describe('up --runtime kind refuses a bad create concurrency before anything is made', () => {
  let home: Awaited<ReturnType<typeof isolatedLabHome>>;

  beforeAll(async () => {
    home = await isolatedLabHome('bad-concurrency');
  });
  afterAll(async () => home.cleanup());

  it('OCM_LAB_KIND_CREATE_CONCURRENCY=two: exit 2 naming it, at the checks, with or without a Docker engine; no lab directory', async () => {
    const file = path.join(home.home, 'lab.yaml');
    await fs.writeFile(file, (await fs.readFile('examples/default-lab.yaml', 'utf8')).replace(/^name: .*$/m, 'name: e2e-badconc'));
    const r = await cli(['up', '--runtime', 'kind', '--artifacts', 'build', '--config', file], {
      OCM_LAB_HOME: path.join(home.home, 'labs'),
      OCM_LAB_KIND_CREATE_CONCURRENCY: 'two',
    });
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain('OCM_LAB_KIND_CREATE_CONCURRENCY=two is not a whole number');
    expect(r.stdout + r.stderr).not.toMatch(/Images|kind create/);
    await expect(fs.access(path.join(home.home, 'labs', 'e2e-badconc'))).rejects.toThrow();
  });
});
