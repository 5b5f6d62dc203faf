import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * vitest's order (groups, then failed and longest first), with the files of the shared labs placed where the labs
 * need them (test/support/test-lab.ts). The default lab's MSA token rotates 8 minutes after the lab came up, under
 * steady `proxy kubectl` traffic to cluster1 that must not fail. So the e2e project starts with the files that bring
 * the default lab up and leave cluster1's tunnel alone; then files with labs of their own that assert no timing (the
 * minutes until the rotation pass while they run, beside the shared lab); then the rotation check; then the file that
 * moves and restarts cluster1's cluster-proxy agent (addon-deployment-config) and the lab's last user, which takes it
 * down, so the idle shared lab does not run beside the rest of the project. The hub + cluster1 lab's users come next,
 * one after the other, its last user taking it down before the files with labs of their own run (one shared lab at a
 * time: the hub lab's users assert timings, addon-parity's TTL and 100 users, that want the machine to themselves).
 */
const FIRST = [
  'test/e2e/addons.test.ts',
  'test/e2e/addon-placements.test.ts',
  'test/e2e/addon-dev.test.ts',
  'test/e2e/conformance.test.ts',
  'test/e2e/existing-runtime.test.ts',
  'test/e2e/cluster-add-remove.test.ts',
  'test/e2e/msa-rotation.test.ts',
  'test/e2e/addon-deployment-config.test.ts',
  'test/e2e/shared-labs-down.test.ts',
  'test/e2e/clusterprofile.test.ts',
  'test/e2e/cluster-gateway.test.ts',
  'test/e2e/shared-namespace.test.ts',
  'test/e2e/addon-parity.test.ts',
  'test/e2e/shared-hub-down.test.ts',
];

function rank(spec: TestSpecification): number {
  const file = path.relative(spec.project.config.root, spec.moduleId).split(path.sep).join('/');
  const first = FIRST.indexOf(file);
  return first === -1 ? 0 : first - FIRST.length;
}

export default class SharedLabSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // vitest keeps a project's files together; the ranks reorder within each run of one project's files only.
    const blocks: TestSpecification[][] = [];
    for (const spec of sorted) {
      const block = blocks.at(-1);
      if (block && block[0]!.project.name === spec.project.name) block.push(spec);
      else blocks.push([spec]);
    }
    // Array.prototype.sort is stable: files of the same rank keep vitest's order.
    return blocks.flatMap((block) => block.sort((a, b) => rank(a) - rank(b)));
  }
}
