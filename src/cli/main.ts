#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { exitCodeOf, LabError } from '../errors.js';

/** Ours, read beside dist/: yargs would read the package.json above node_modules, the user's project once installed with npm. */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

async function main(argv: string[]): Promise<void> {
  // `--version` alone answers before yargs and the command tree load (~60 ms instead of ~400).
  if (argv.length === 3 && argv[2] === '--version') {
    process.stdout.write(`${packageVersion()}\n`);
    return;
  }
  const [{ default: yargs }, { hideBin }] = await Promise.all([import('yargs'), import('yargs/helpers')]);
  let cli = yargs(hideBin(argv))
    .scriptName('ocm-lab')
    .version(packageVersion())
    .usage('$0 <command> [options]')
    .option('config', {
      alias: 'c',
      type: 'string',
      default: process.env.OCM_LAB_CONFIG || undefined,
      describe: 'lab file (YAML; or $OCM_LAB_CONFIG); the default lab when omitted',
    })
    .option('output', { alias: 'o', choices: ['text', 'json'] as const, default: 'text' as const, describe: 'output format' })
    .option('verbose', { alias: 'v', type: 'boolean', default: false, describe: 'print every step and command' })
    .strict()
    .demandCommand(1, 'name a command; see --help')
    .recommendCommands()
    .help()
    .fail((msg, err) => {
      if (err) throw err;
      process.stderr.write(`error: ${msg}\nRun 'ocm-lab --help' for usage.\n`);
      process.exit(2);
    });
  // Only the named command's modules are loaded: the whole CLI's module graph costs ~1 s of start-up,
  // and each lab-started process (nodelet, addon agents and managers, tunnel) ~40 MB more.
  const commands =
    argv[2] === 'internal'
      ? [await (await import('./commands/internal.js')).internalCommandFor(argv)]
      : await (await import('./commands/index.js')).loadCommands(argv[2]);
  for (const command of commands) cli = cli.command(command);
  await cli.parseAsync();
}

main(process.argv).catch((err: unknown) => {
  if (err instanceof LabError) {
    process.stderr.write(`error: ${err.message}\n`);
    if (err.hint) process.stderr.write(`hint: ${err.hint}\n`);
  } else {
    process.stderr.write(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  }
  process.exit(exitCodeOf(err));
});
