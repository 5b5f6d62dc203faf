import { labBenchmark } from './lab.js';
import { networkBenchmark } from './network.js';
import { tunnelBenchmark } from './tunnel.js';
import { addonsBenchmark } from './addons.js';
import { podsBenchmark } from './pods.js';
import { gatewayBenchmark } from './gateway.js';
import { addonDevBenchmark } from './addon-dev.js';
import { scaleBenchmark } from './scale.js';
import { startupBenchmark } from './startup.js';
import type { Benchmark } from './types.js';

export const benchmarks: Benchmark[] = [];
benchmarks.push(labBenchmark, tunnelBenchmark, networkBenchmark, addonsBenchmark, podsBenchmark, gatewayBenchmark);
benchmarks.push(addonDevBenchmark, scaleBenchmark, startupBenchmark);
