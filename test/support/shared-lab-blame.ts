/** A shared lab's difference from its baseline after each test of a file, in the order the tests ran. */
export interface TestDifference {
  test: string;
  difference: string[];
}

/**
 * For each line the file left behind, the test after which it last appeared (absent after the test before, or
 * before the first test); a line no test's end showed came with the file's own after-hooks.
 */
export function blameTests(history: readonly TestDifference[], leftover: readonly string[]): string[] {
  return leftover.map((line) => {
    let since: string | undefined;
    history.forEach((entry, i) => {
      if (entry.difference.includes(line) && (i === 0 || !history[i - 1]?.difference.includes(line))) since = entry.test;
    });
    return since === undefined ? `${line} (after the file's own after-hooks)` : `${line} (since the test "${since}")`;
  });
}
