import { labBenchmark } from './lab.js';
import { networkBenchmark } from './network.js';
import { tunnelBenchmark } from './tunnel.js';
import { addonsBenchmark } from './addons.js';
import { podsBenchmark } from './pods.js';
import { gatewayBenchmark } from './gateway.js';
import { addonDevBenchmark } from './addon-dev.js';
import { scaleBenchmark } from './scale.js';
import { startupBenchmark } from './startup.js';
/** A benchmark prints its own side-by-side table; it must bound its own run time. */
export interface Benchmark {
  name: string;
  describe: string;
  run(args: string[]): Promise<void>;
}

export const benchmarks: Benchmark[] = [];
benchmarks.push(labBenchmark, tunnelBenchmark, networkBenchmark, addonsBenchmark, podsBenchmark, gatewayBenchmark);
benchmarks.push(addonDevBenchmark, scaleBenchmark, startupBenchmark);
