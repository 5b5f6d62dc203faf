import type { Reporter, TestModule } from 'vitest/node';

/**
 * Prints each test file's duration, longest first (docs/ci.md keeps the table), then the plain
 * closing line CI reads: "N passed, N failed[, N skipped]". That line stays the last one printed.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      let [modPassed, modFailed, modSkipped] = [0, 0, 0];
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') modPassed++;
        else if (state === 'failed') modFailed++;
        else modSkipped++;
      }
      // A file that failed with no failed test (it did not load, or a beforeAll hook failed and its
      // tests were skipped) must count as failures: its skipped tests, or the file itself.
      if (mod.state() === 'failed' && modFailed === 0) [modFailed, modSkipped] = [Math.max(1, modSkipped), 0];
      passed += modPassed;
      failed += modFailed;
      skipped += modSkipped;
    }
    failed += unhandledErrors.length;
    const line = `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`;
    process.stdout.write(`\n${durationTable(testModules)}\n${line}\n`);
  }
}

/** Seconds per file: importing it (collect) plus its tests and hooks; one row per file, longest first. */
function durationTable(testModules: ReadonlyArray<TestModule>): string {
  const rows = testModules
    .map((mod) => {
      const d = mod.diagnostic();
      return { seconds: (d.collectDuration + d.duration) / 1000, project: mod.project.name, file: mod.relativeModuleId };
    })
    .sort((a, b) => b.seconds - a.seconds || a.file.localeCompare(b.file));
  const width = Math.max(0, ...rows.map((r) => r.project.length));
  const lines = rows.map((r) => `${r.seconds.toFixed(1).padStart(8)} s  ${r.project.padEnd(width)}  ${r.file}`);
  return ['Duration per file (import, tests and hooks), longest first:', ...lines].join('\n') + '\n';
}
