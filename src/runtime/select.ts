import { InvalidInputError } from '../errors.js';
import { LocalRuntime } from './local/runtime.js';
import type { Runtime, RuntimeName } from './types.js';

export type RuntimeChoice = RuntimeName | 'auto';
export const RUNTIME_CHOICES: RuntimeChoice[] = ['auto', 'local'];

/**
 * `auto` picks the best runtime this machine supports. Only `local` exists
 * today; `kind` (Docker networks + kind clusters) will be preferred by `auto`
 * when Docker and kind are usable.
 */
export async function selectRuntime(choice: RuntimeChoice = 'auto'): Promise<Runtime<any>> {
  switch (choice) {
    case 'auto':
    case 'local':
      return new LocalRuntime();
    default:
      throw new InvalidInputError(`--runtime ${choice} is not available yet; choose one of: ${RUNTIME_CHOICES.join(', ')}`);
  }
}
