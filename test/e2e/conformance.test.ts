import fs from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LabConfig } from '../../src/config/index.js';
import { runConformance } from '../../src/scenario/index.js';
import { cli } from '../support/lab.js';
import { useSharedLab } from '../support/test-lab.js';

/** The executable documents run against a real lab, as `npm test` runs the conformance suite. */
describe('conformance suite on a real lab', () => {
  let home: { home: string };
  let config: LabConfig;
  let env: NodeJS.ProcessEnv;

  // The default lab, addons included: every shipped document can run on it.
  const lab = useSharedLab('default', 'test/e2e/conformance.test.ts');
  beforeAll(async () => {
    ({ config, env } = lab);
    home = { home: await fs.mkdtemp(path.join(lab.home, 'conformance-')) };
  });

  it('passes every document the lab can run, and skips the others only for what the lab lacks', async () => {
    const result = await runConformance(config);
    const byName = Object.fromEntries(result.results.map((r) => [r.scenario.name, r.result]));
    for (const name of ['vpc-isolation', 'manifestwork', 'addon-template', 'deployment-only-role', 'proxy-health', 'cluster-gateway', 'gateway-multi-tenant']) {
      expect(byName[name]?.status, `${name}: ${JSON.stringify(byName[name]?.steps.map((s) => s.failure ?? s.status))}`).toBe('passed');
    }
    expect(result.failed).toBe(0);
    for (const { scenario, result: r } of result.results.filter((x) => x.result.status === 'skipped')) {
      // A skip must name a capability or addon this lab really does not have.
      expect(r.skipReason, scenario.name).toMatch(/^the lab (lacks|does not install) /);
    }
  });

  it('reports a document whose expectation does not hold as failed, through the CLI', async () => {
    const dir = path.join(home.home, 'docs');
    await fs.mkdir(dir);
    await fs.writeFile(
      path.join(dir, 'wrong.md'),
      '---\ntitle: Wrong on purpose\nsummary: cluster1 has no namespace called nope\n---\n\n```sh\nkubectl --context cluster1 get namespace nope\n```\n\n```expect contains\nActive\n```\n',
    );
    const result = await runConformance(config, { dir });
    expect(result.failed).toBe(1);
    expect(result.results[0]!.result.steps[0]!.output).toContain('namespaces "nope" not found');
  });

  it('runs from the CLI with JUnit output and a transcript', async () => {
    const junit = path.join(home.home, 'junit.xml');
    const transcripts = path.join(home.home, 'transcripts');
    const r = await cli(['conformance', '--junit', junit, '--transcript', transcripts, '--only', 'vpc-isolation', '-o', 'json'], env);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ passed: 1, failed: 0 });
    expect(await fs.readFile(junit, 'utf8')).toContain('<testsuite name="vpc-isolation"');
    expect(await fs.readFile(path.join(transcripts, 'vpc-isolation.md'), 'utf8')).toContain('from vpc-1 (hub): cannot connect to');
    expect(r.stderr).toContain('✔ vpc-isolation: passed');
  });
});
