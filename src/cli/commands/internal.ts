import type { CommandModule } from 'yargs';
import { internalCommands } from './internal/index.js';

export const internalCommand: CommandModule = {
  command: 'internal <command>',
  describe: false, // hidden: entry points the lab starts, not for people
  builder: (y) => {
    let b = y;
    for (const c of internalCommands) b = b.command(c);
    return b.demandCommand(1);
  },
  handler: () => undefined,
};
