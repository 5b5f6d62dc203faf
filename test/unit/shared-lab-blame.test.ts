import { describe, expect, it } from 'vitest';
import { blameTests } from '../support/shared-lab-blame.js';

describe('blameTests: which test of a file left a shared lab changed', () => {
  const history = [
    { test: 'adds a', difference: ['+ hub Deployment ns/a'] },
    { test: 'removes a, adds b', difference: ['+ hub Namespace b'] },
    { test: 'adds a again', difference: ['+ hub Namespace b', '+ hub Deployment ns/a'] },
    { test: 'reads', difference: ['+ hub Namespace b', '+ hub Deployment ns/a'] },
  ];

  it('names the test after which each leftover line last appeared', () => {
    expect(blameTests(history, ['+ hub Namespace b', '+ hub Deployment ns/a'])).toEqual([
      '+ hub Namespace b (since the test "removes a, adds b")',
      '+ hub Deployment ns/a (since the test "adds a again")',
    ]);
  });

  it('says a line no test showed came with the after-hooks', () => {
    expect(blameTests(history, ['- cluster1 ConfigMap ns/c'])).toEqual(["- cluster1 ConfigMap ns/c (after the file's own after-hooks)"]);
    expect(blameTests([], ['+ hub Namespace b'])).toEqual(["+ hub Namespace b (after the file's own after-hooks)"]);
  });
});
