import { describe, expect, it } from 'vitest';
import { ExitCode, InvalidInputError, exitCodeOf } from '../../src/errors.js';

describe('exit codes', () => {
  it('maps lab errors to distinct exit codes and anything else to 1', () => {
    expect(exitCodeOf(new InvalidInputError('bad'))).toBe(ExitCode.invalidInput);
    expect(exitCodeOf(new Error('boom'))).toBe(ExitCode.failure);
    expect(new Set(Object.values(ExitCode)).size).toBe(Object.keys(ExitCode).length);
  });
});
