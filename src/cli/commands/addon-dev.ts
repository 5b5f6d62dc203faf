import type { CommandModule } from 'yargs';
import { DevSession, type LoadResult } from '../../addons/dev/session.js';
import { loadLabConfig } from '../../config/index.js';
import { emit, type GlobalOptions } from '../output.js';

type Args = GlobalOptions & { dir: string; once: boolean; timeout: number };

function summary(r: LoadResult): string {
  const times = Object.entries(r.runningMs)
    .map(([c, ms]) => `${c} ${(ms / 1000).toFixed(1)} s`)
    .join(', ');
  return r.changed.length ? `${r.addon}: ${r.changed.join(' + ')} reloaded; save to new pod Ready: ${times}` : `${r.addon}: unchanged`;
}

/**
 * `ocm-lab addon dev DIR`: builds the addon project, loads it into the running lab (manager on the
 * hub, agent on every managed cluster), waits until it is Available everywhere, then reloads it on
 * every save under DIR/src and prints how long each save took to run on every cluster.
 */
export const addonDevCommand: CommandModule<GlobalOptions, Args> = {
  command: 'dev <dir>',
  describe: 'load an addon project into the lab and reload it on every save (--once: load and exit)',
  builder: (y) =>
    y
      .positional('dir', { type: 'string', demandOption: true, describe: 'the project (from ocm-lab addon new)' })
      .option('once', { type: 'boolean', default: false, describe: 'load (or reload) once, wait until it runs everywhere, and exit' })
      .option('timeout', { type: 'number', default: 180, describe: 'seconds to wait for the addon to run on every cluster' }) as never,
  handler: async (argv) => {
    const config = await loadLabConfig(argv.config);
    const quiet = argv.output === 'json';
    const progress = (line: string) => {
      if (!quiet) process.stderr.write(`${line}\n`);
    };
    const session = await DevSession.open(config, argv.dir, { progress, timeoutMs: argv.timeout * 1000 });
    try {
      const first = await session.load();
      if (argv.once) {
        emit(argv, first, summary);
        return;
      }
      process.stdout.write(
        `${summary(first)}\nwatching ${session.dir}/src; ` +
          `Ctrl-C stops watching and leaves ${first.addon} running (remove it with: ocm-lab addon disable ${first.addon})\n`,
      );
      const controller = new AbortController();
      process.once('SIGINT', () => controller.abort());
      process.once('SIGTERM', () => controller.abort());
      await session.watch(controller.signal, (r) => process.stdout.write(`${summary(r)}\n`));
      process.stdout.write(`stopped watching; ${first.addon} keeps running on lab '${config.name}' (remove it with: ocm-lab addon disable ${first.addon})\n`);
    } finally {
      session.close();
    }
  },
};
