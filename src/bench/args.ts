import type { Benchmark } from './types.js';

/** What `npm run bench -- <args>` does: print help (exit 0), refuse (exit 2), or run these benchmarks. */
export type BenchCommand = { kind: 'help'; text: string } | { kind: 'error'; message: string } | { kind: 'run'; selected: Benchmark[] };

const HELP_FLAGS = new Set(['--help', '-h']);

/**
 * The benchmarks' names among `args`: bare words, not the value of a `--name value` option. A flag the benchmarks
 * declare without a value (`--quick`, `--help`) takes none; one they do not declare is taken to have one.
 */
function namesIn(args: readonly string[], benchmarks: readonly Benchmark[]): string[] {
  const bare = new Set([...HELP_FLAGS, ...benchmarks.flatMap((b) => b.options.filter((o) => !o.flag.includes(' ')).map((o) => o.flag))]);
  const takesValue = (flag: string | undefined) => flag !== undefined && flag.startsWith('--') && !flag.includes('=') && !bare.has(flag);
  return args.filter((a, i) => !a.startsWith('-') && !takesValue(args[i - 1]));
}

function usageOf(b: Benchmark): string {
  const width = Math.max(0, ...b.options.map((o) => o.flag.length));
  return [
    `npm run bench -- ${b.name}${b.options.length ? ' [options]' : ''}`,
    '',
    `  ${b.describe}`,
    ...(b.options.length ? ['', 'Options:', ...b.options.map((o) => `  ${o.flag.padEnd(width)}  ${o.describe}`)] : ['', 'No options.']),
  ].join('\n');
}

function overview(benchmarks: readonly Benchmark[]): string {
  const width = Math.max(0, ...benchmarks.map((b) => b.name.length));
  return [
    'npm run bench -- [<name>…] [options]   (node dist/bench/main.js)',
    '',
    'Runs the named benchmarks, or all of them; `<name> --help` shows one benchmark and its options.',
    '',
    'Benchmarks:',
    ...benchmarks.map((b) => `  ${b.name.padEnd(width)}  ${b.describe}`),
  ].join('\n');
}

/**
 * Decides from the arguments alone, before any benchmark starts: `--help` or `-h` anywhere prints the help of the
 * named benchmarks (of all when none is named) and runs nothing; an unknown name is refused. Pure.
 */
export function benchCommand(args: readonly string[], benchmarks: readonly Benchmark[]): BenchCommand {
  const wanted = namesIn(args, benchmarks);
  const unknown = wanted.filter((w) => !benchmarks.some((b) => b.name === w));
  if (unknown.length)
    return { kind: 'error', message: `unknown benchmark ${unknown.join(', ')}; known: ${benchmarks.map((b) => b.name).join(', ') || '(none)'}` };
  const selected = wanted.length ? benchmarks.filter((b) => wanted.includes(b.name)) : [...benchmarks];
  if (args.some((a) => HELP_FLAGS.has(a))) return { kind: 'help', text: `${wanted.length ? selected.map(usageOf).join('\n\n') : overview(benchmarks)}\n` };
  return { kind: 'run', selected };
}
