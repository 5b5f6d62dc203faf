#!/usr/bin/env node
import { provideAddonVocabulary } from '../config/addon-vocabulary.js';
import { exitCodeOf, LabError } from '../errors.js';
import { commandOf, parseProxyKubectl } from './argv.js';
import { enableCompileCache, nodeVerdict } from './node-runtime.js';
import { PACKAGE_VERSION } from '../version.js';

// A lab file names addons of the registry; config/ cannot import it, so it is handed in here, loaded only for a lab file.
provideAddonVocabulary(() => import('../addons/registry.js').then((m) => m.addonVocabulary()));

async function main(argv: string[]): Promise<void> {
  // `--version` alone answers before yargs and the command tree load (~60 ms instead of ~400).
  if (argv.length === 3 && argv[2] === '--version') {
    process.stdout.write(`${PACKAGE_VERSION}\n`);
    return;
  }
  const verdict = nodeVerdict(process.versions.node);
  if (verdict.kind === 'too-old') throw new LabError('missingPrerequisite', verdict.message, { hint: verdict.hint });
  const args = argv.slice(2);
  const internal = argv[2] === 'internal';
  const command = commandOf(args);
  // The lab's own processes (internal …) start from images and pods: only what a person runs keeps a compile cache.
  if (!internal) enableCompileCache();
  // Where the lab's processes and our image take this Node from: said once, where it matters.
  if (verdict.kind === 'unsupported' && (command === 'up' || command === 'setup')) process.stderr.write(`warning: ${verdict.message}\n`);
  // The ClusterProfile credentials plugin keeps upstream's flag parsing, messages and exit codes.
  if (command === 'cp-creds' && args[0] === 'cp-creds') return import('./commands/cp-creds.js').then((m) => m.cpCreds(args.slice(1)));
  const fast = command === 'proxy' ? parseProxyKubectl(args) : null;
  if (fast) return import('./commands/proxy-kubectl.js').then((m) => m.proxyKubectl(fast));
  const [{ default: yargs }, { hideBin }] = await Promise.all([import('yargs'), import('yargs/helpers')]);
  let cli = yargs(hideBin(argv))
    .scriptName('ocm-lab')
    .version(PACKAGE_VERSION)
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
  const commands = internal
    ? [await import('./commands/internal.js').then((m) => m.internalCommandFor(argv))]
    : await import('./commands/index.js').then((m) => m.loadCommands(command));
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
