import type { CommandModule } from 'yargs';
import { loadInternalCommands } from './internal/index.js';

/** `ocm-lab internal <command>` with the subcommands given (see loadInternalCommands). */
function internalCommandGroup(subcommands: CommandModule<any, any>[]): CommandModule {
  return {
    command: 'internal <command>',
    describe: false, // hidden: entry points the lab starts, not for people
    builder: (y) => {
      let b = y;
      for (const c of subcommands) b = b.command(c);
      return b.demandCommand(1);
    },
    handler: () => undefined,
  };
}

/** The group for process.argv (node, script, "internal", subcommand, …): only the subcommand it names is loaded. */
export async function internalCommandFor(argv: readonly string[]): Promise<CommandModule> {
  return internalCommandGroup(await loadInternalCommands(argv[3]));
}
