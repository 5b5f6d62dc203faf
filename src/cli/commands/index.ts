import type { CommandModule } from 'yargs';
import { internalCommand } from './internal.js';
import { validateCommand } from './validate.js';

/**
 * Every top-level command. Each module stays thin: parse flags, call a library
 * function that tests call too, print the result.
 */
export const commands: CommandModule<any, any>[] = [validateCommand, internalCommand];
