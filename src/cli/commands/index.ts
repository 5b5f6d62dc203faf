import type { CommandModule } from 'yargs';
import { internalCommand } from './internal.js';
import { downCommand, kubeconfigCommand, statusCommand, upCommand } from './lab-commands.js';
import { conformanceCommand } from './conformance.js';
import { createCommand } from './create-work.js';
import { getCommand } from './get.js';
import { logsCommand } from './logs.js';
import { scenarioCommand } from './scenario.js';
import { setupCommand } from './setup.js';
import { validateCommand } from './validate.js';

/**
 * Every top-level command. Each module stays thin: parse flags, call a library
 * function that tests call too, print the result.
 */
export const commands: CommandModule<any, any>[] = [
  upCommand,
  downCommand,
  statusCommand,
  getCommand,
  createCommand,
  kubeconfigCommand,
  logsCommand,
  setupCommand,
  scenarioCommand,
  conformanceCommand,
  validateCommand,
  internalCommand,
];
