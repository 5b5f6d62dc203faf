import type { CommandModule } from 'yargs';
import { downCommand, kubeconfigCommand, statusCommand, upCommand } from './lab-commands.js';
import { conformanceCommand } from './conformance.js';
import { createCommand } from './create-work.js';
import { getCommand } from './get.js';
import { logsCommand } from './logs.js';
import { scenarioCommand } from './scenario.js';
import { setupCommand } from './setup.js';
import { validateCommand } from './validate.js';
import { proxyCommand } from './proxy.js';
import { addonCommand } from './addon.js';

/**
 * Every top-level command but `internal` (main.ts loads that group on its own). Each module stays thin: parse flags, call a library
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
  proxyCommand,
  addonCommand,
  setupCommand,
  scenarioCommand,
  conformanceCommand,
  validateCommand,
];
