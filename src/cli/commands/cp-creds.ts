import type { CommandModule } from 'yargs';
import { runCpCreds } from '../../addons/managed-serviceaccount/cp-creds.js';
import type { GlobalOptions } from '../output.js';

/** The plugin as kubectl runs it: main.ts hands it its arguments before yargs loads (it runs on every token fetch). */
export async function cpCreds(args: readonly string[]): Promise<void> {
  process.exitCode = await runCpCreds(args, {
    env: process.env,
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  });
}

/** Listed in `ocm-lab --help`; main.ts runs the plugin itself, so this handler only serves help. */
export const cpCredsCommand: CommandModule<GlobalOptions, GlobalOptions> = {
  command: 'cp-creds',
  describe:
    "ClusterProfile credentials plugin (client-go exec, as managed-serviceaccount's cp-creds): " +
    'prints the token synced for --managed-serviceaccount=NAME to the cluster in $KUBERNETES_EXEC_INFO',
  handler: async () => cpCreds(process.argv.slice(3)),
};
