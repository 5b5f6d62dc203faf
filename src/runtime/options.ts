import { InvalidInputError } from '../errors.js';

/**
 * Refuses options a runtime does not take, naming the first and the ones it
 * takes (options come from the lab file's `runtime.<name>` and from flags).
 */
export function refuseUnknownOptions(runtime: string, options: Record<string, unknown>, known: readonly string[]): void {
  const unknown = Object.keys(options).filter((k) => !known.includes(k));
  if (!unknown.length) return;
  const takes = known.length ? `it takes ${known.join(', ')}` : 'it takes none';
  throw new InvalidInputError(`runtime.${runtime}.${unknown[0]} is not an option of the ${runtime} runtime; ${takes}`, {
    hint: `remove it from the lab file's runtime: section`,
  });
}

/** A string option, or undefined when not given; anything else is refused naming it. */
export function stringOption(runtime: string, options: Record<string, unknown>, key: string): string | undefined {
  const value = options[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !value) throw new InvalidInputError(`runtime.${runtime}.${key} must be a non-empty string, not ${JSON.stringify(value)}`);
  return value;
}
