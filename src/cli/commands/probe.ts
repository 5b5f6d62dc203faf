import type { CommandModule } from 'yargs';
import { loadLabConfig } from '../../config/load.js';
import { ExitCode } from '../../errors.js';
import { probeFromCluster, type ProbeReport } from '../../lab/lifecycle.js';
import { emit, type GlobalOptions } from '../output.js';

type ProbeArgs = GlobalOptions & { from: string; target: string; timeout: number };

function describe(r: ProbeReport): string {
  const what = r.cluster ? `${r.cluster}'s API at ${r.target}` : r.target;
  return `from ${r.vpc} (${r.from}): ${r.connected ? 'connected to' : 'cannot connect to'} ${what}`;
}

export const probeCommand: CommandModule<GlobalOptions, ProbeArgs> = {
  command: 'probe <from> <target>',
  describe: "open a TCP connection from inside a cluster's network (its VPC) to another cluster's API or host:port; exit 1 when it cannot connect",
  builder: (y) =>
    y
      .positional('from', { type: 'string', demandOption: true, describe: 'the cluster whose network the connection starts in, e.g. cluster1' })
      .positional('target', { type: 'string', demandOption: true, describe: 'a cluster (its API server as other clusters dial it) or host:port' })
      .option('timeout', { type: 'number', default: 3, describe: 'seconds to wait for the connection' }),
  handler: async (argv) => {
    const config = await loadLabConfig(argv.config);
    const report = await probeFromCluster(config, argv.from, argv.target, { timeoutMs: argv.timeout * 1000 });
    emit(argv, report, describe);
    // The report above is the answer; 1 lets scripts (and `expect fails`) tell.
    if (!report.connected) process.exitCode = ExitCode.failure;
  },
};
