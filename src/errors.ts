/**
 * Every failure the CLI reports maps to one of these exit codes, so scripts can
 * tell bad input from a missing prerequisite from a component that never came up.
 */
export const ExitCode = {
  ok: 0,
  failure: 1,
  invalidInput: 2,
  missingPrerequisite: 3,
  notReady: 4,
  notFound: 5,
  conflict: 6,
} as const;

export type ExitCodeName = keyof typeof ExitCode;

export class LabError extends Error {
  readonly exitCode: number;
  /** What the user can do about it; printed after the message. */
  readonly hint: string | undefined;

  constructor(kind: ExitCodeName, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'LabError';
    this.exitCode = ExitCode[kind];
    this.hint = options.hint;
  }
}

export class InvalidInputError extends LabError {
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super('invalidInput', message, options);
    this.name = 'InvalidInputError';
  }
}

export class MissingPrerequisiteError extends LabError {
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super('missingPrerequisite', message, options);
    this.name = 'MissingPrerequisiteError';
  }
}

export class NotReadyError extends LabError {
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super('notReady', message, options);
    this.name = 'NotReadyError';
  }
}

export class NotFoundError extends LabError {
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super('notFound', message, options);
    this.name = 'NotFoundError';
  }
}

export class ConflictError extends LabError {
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super('conflict', message, options);
    this.name = 'ConflictError';
  }
}

export function exitCodeOf(err: unknown): number {
  return err instanceof LabError ? err.exitCode : ExitCode.failure;
}
