import { provideAddonVocabulary } from '../config/addon-vocabulary.js';
import { benchCommand } from './args.js';
import { benchmarks } from './registry.js';

// As src/cli/main.ts: the benchmarks that read a lab file check its addons against the registry.
provideAddonVocabulary(() => import('../addons/registry.js').then((m) => m.addonVocabulary()));

/** `npm run bench [-- <name>…]`: runs the named benchmarks, or all of them; `--help` prints what they are and runs none. */
async function main(args: string[]): Promise<void> {
  // `--name value` options belong to the benchmarks (e.g. `lab --runtime kind`); only bare words name benchmarks.
  const command = benchCommand(args, benchmarks);
  if (command.kind === 'help') {
    process.stdout.write(command.text);
    return;
  }
  if (command.kind === 'error') {
    process.stderr.write(`error: ${command.message}\n`);
    process.exit(2);
  }
  for (const b of command.selected) {
    process.stdout.write(`\n== ${b.name}: ${b.describe}\n`);
    await b.run(args.filter((a) => a !== b.name));
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
