import { defineConfig } from 'vitest/config';
import SharedLabSequencer from './test/support/shared-lab-sequencer.js';

export default defineConfig({
  test: {
    reporters: ['default', './test/support/summary-reporter.ts'],
    // Files of a shared lab where the lab needs them (test/support/test-lab.ts).
    sequence: { sequencer: SharedLabSequencer },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          testTimeout: 30_000,
          // A whole-tree hook (the import graph's cruise of src/) takes as long as a test on a busy machine.
          hookTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          // Written for the local runtime: pinned, or auto would pick kind wherever a Docker engine answers.
          env: { OCM_LAB_RUNTIME: 'local' },
          // Labs several files share (useSharedLab): brought up by their first user, down at the end of the run.
          globalSetup: ['test/support/shared-labs-setup.ts'],
          // Labs are heavy (real control planes on 2 cores): one file at a time.
          fileParallelism: false,
          testTimeout: 300_000,
          hookTimeout: 900_000,
        },
      },
      {
        // Fault injection on a real lab (issue 16): docs/reliability.md, "Faults".
        test: {
          name: 'faults',
          include: ['test/faults/**/*.test.ts'],
          env: { OCM_LAB_RUNTIME: 'local' },
          // Never beside an e2e lab: its recovery goal is timed, on 2 cores. Group 1 runs after unit (group 0);
          // e2e (one file at a time, no groupOrder) is a group vitest puts last (docs/notes.md#vitest-puts-e2e-last-after-faults).
          sequence: { groupOrder: 1 },
          fileParallelism: false,
          testTimeout: 300_000,
          hookTimeout: 900_000,
        },
      },
      {
        // Matrix-only checks (upstream's Go addons; a Go build of each): `npx vitest run --project matrix`, docs/ci.md.
        test: {
          name: 'matrix',
          include: ['test/matrix/**/*.test.ts'],
          fileParallelism: false,
          testTimeout: 600_000,
          hookTimeout: 1_800_000,
        },
      },
      {
        // The connected path in a simulated connected world on loopback (test/support/connected-world): `npm run test:connected`.
        test: {
          name: 'connected',
          include: ['test/connected/**/*.test.ts'],
          fileParallelism: false,
          testTimeout: 1_800_000,
          hookTimeout: 900_000,
        },
      },
      {
        // The kind runtime end to end (a Docker engine of its own, offline images): `npm run test:kind`.
        test: {
          name: 'kind',
          include: ['test/kind/**/*.test.ts'],
          fileParallelism: false,
          testTimeout: 2_400_000,
          hookTimeout: 900_000,
        },
      },
    ],
  },
});
