import { InvalidInputError } from '../errors.js';

/** A flag of `up` that gives one of a runtime's options (the runtime checks the value, as it checks the lab file's). */
export interface RuntimeUpFlag {
  /** `hub-context` for `--hub-context`. */
  flag: string;
  /** The runtime's option it sets (`hubContext`): the lab file's `runtime.<name>.<option>`. */
  option: string;
  /** Repeatable; given to the runtime as a list (empty when not given) once any flag of the runtime is. */
  array?: boolean;
  /** Also with `--runtime auto`: used only when auto picks this runtime. */
  withAuto?: boolean;
  describe: string;
}

const given = (value: unknown) => value !== undefined && !(Array.isArray(value) && value.length === 0);

/** "--a", "--a and --b", "--a, --b and --c" */
function flagList(flags: readonly RuntimeUpFlag[]): string {
  const names = flags.map((f) => `--${f.flag}`);
  return names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : (names[0] ?? '');
}

/**
 * The runtime options `up`'s flags give, per runtime (the runtime that runs the lab takes its own). A flag of
 * one runtime with `--runtime` another (or `auto`, unless the flag allows it) is exit 2 naming the runtime's flags.
 */
export function optionsFromFlags(
  argv: Record<string, unknown>,
  choice: string,
  flagsByRuntime: Readonly<Record<string, readonly RuntimeUpFlag[]>>,
): Record<string, Record<string, unknown>> {
  const options: Record<string, Record<string, unknown>> = {};
  for (const [runtime, flags] of Object.entries(flagsByRuntime)) {
    const set = flags.filter((f) => given(argv[f.flag]));
    if (!set.length) continue;
    if (choice !== runtime && !(choice === 'auto' && set.every((f) => f.withAuto))) {
      throw new InvalidInputError(`${flagList(flags)} ${flags.length > 1 ? 'are' : 'is'} for --runtime ${runtime}`);
    }
    options[runtime] = Object.fromEntries(flags.filter((f) => set.includes(f) || f.array).map((f) => [f.option, argv[f.flag] ?? []]));
  }
  return options;
}
