/**
 * What every benchmark is. Its own module, imported by the benchmarks and by registry.ts, which lists them:
 * were it in registry.ts, every benchmark would import the module that imports it.
 */
export interface Benchmark {
  name: string;
  describe: string;
  /** Its options, as `<name> --help` prints them (empty when it takes none). */
  options: readonly { flag: string; describe: string }[];
  /** Prints its own side-by-side table; it must bound its own run time. */
  run(args: string[]): Promise<void>;
}
