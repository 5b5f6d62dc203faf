import { benchmarks } from './registry.js';

/** `npm run bench [-- <name>…]`: runs the named benchmarks, or all of them. */
async function main(args: string[]): Promise<void> {
  // `--name value` options belong to the benchmarks (e.g. `lab --runtime kind`); only bare words name benchmarks.
  const wanted = args.filter((a, i) => !a.startsWith('-') && !(args[i - 1]?.startsWith('--') && !args[i - 1]?.includes('=')));
  const unknown = wanted.filter((w) => !benchmarks.some((b) => b.name === w));
  if (unknown.length) {
    process.stderr.write(`error: unknown benchmark ${unknown.join(', ')}; known: ${benchmarks.map((b) => b.name).join(', ') || '(none)'}\n`);
    process.exit(2);
  }
  const selected = wanted.length ? benchmarks.filter((b) => wanted.includes(b.name)) : benchmarks;
  for (const b of selected) {
    process.stdout.write(`\n== ${b.name}: ${b.describe}\n`);
    await b.run(args.filter((a) => a !== b.name));
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
