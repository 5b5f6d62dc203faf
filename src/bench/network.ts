import { performance } from 'node:perf_hooks';
import {
  applyNetwork,
  findLeftovers,
  networkHealth,
  planNetwork,
  probeNetworkCapability,
  teardownNetwork,
  type NetworkResource,
} from '../runtime/local/network/index.js';
import type { Benchmark } from './types.js';

const LAB = 'bench-network';

function stats(ms: number[]): string {
  const sorted = [...ms].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
  return `median ${median.toFixed(0)} ms  (min ${sorted[0]?.toFixed(0)}, max ${sorted.at(-1)?.toFixed(0)})`;
}

export const networkBenchmark: Benchmark = {
  name: 'network',
  describe: 'local runtime VPC network of the default topology (2 namespaces, 3 cluster addresses, rules): apply, health check, teardown',
  options: [{ flag: '--quick', describe: '2 rounds instead of 7' }],
  async run(args: string[]): Promise<void> {
    const capability = await probeNetworkCapability();
    if (!capability.canIsolate) {
      process.stdout.write(`skipped: cannot create network namespaces (${capability.reason})\n`);
      return;
    }
    const rounds = args.includes('--quick') ? 2 : 7;
    const plan = await planNetwork({
      labName: LAB,
      vpcs: [
        { name: 'vpc-1', hub: true, clusters: ['hub'] },
        { name: 'vpc-2', hub: false, clusters: ['cluster1', 'cluster2'] },
      ],
    });
    const times = { apply: [] as number[], reapply: [] as number[], health: [] as number[], teardown: [] as number[] };
    const records: NetworkResource[] = [];
    try {
      await teardownNetwork(await findLeftovers(LAB));
      for (let i = 0; i < rounds; i++) {
        const round: NetworkResource[] = [];
        const record = async (r: NetworkResource) => {
          round.push(r);
          records.push(r);
        };
        let t = performance.now();
        await applyNetwork(plan, record);
        times.apply.push(performance.now() - t);
        t = performance.now();
        await applyNetwork(plan, record);
        times.reapply.push(performance.now() - t);
        t = performance.now();
        const health = await networkHealth(plan);
        times.health.push(performance.now() - t);
        if (!health.enforced) throw new Error(`network not healthy after apply: ${health.problems.join('; ')}`);
        t = performance.now();
        await teardownNetwork(round);
        times.teardown.push(performance.now() - t);
      }
    } finally {
      await teardownNetwork([...records, ...(await findLeftovers(LAB))]);
    }
    process.stdout.write(`${rounds} rounds\n`);
    for (const [step, ms] of Object.entries(times)) process.stdout.write(`${step.padEnd(10)}${stats(ms)}\n`);
  },
};
