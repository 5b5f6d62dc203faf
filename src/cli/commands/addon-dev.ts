import type { CommandModule } from 'yargs';
import { DevSession, type LoadResult } from '../../addons/dev/session.js';
import { loadLabConfig } from '../../config/index.js';
import { InvalidInputError } from '../../errors.js';
import { emit, type GlobalOptions } from '../output.js';

type Args = GlobalOptions & { dir: string; once: boolean; timeout: number; image?: string };

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
      .option('timeout', { type: 'number', default: 180, describe: 'seconds to wait for the addon to run on every cluster' })
      .option('image', {
        type: 'string',
        describe:
          "run the addon from its own image (built from the project's Dockerfile, pushed with ocm-lab registry push) instead of reloading src/; needs --once",
      }) as never,
  handler: async (argv) => {
    if (argv.image !== undefined && (!argv.image.trim() || !argv.once)) {
      throw new InvalidInputError(
        argv.image.trim()
          ? `--image ${argv.image}: an addon run from its image is loaded once (the code is in the image); give --once too`
          : '--image is empty: name the addon image, e.g. --image demo:ci',
        { hint: 'the reload route is `ocm-lab addon dev DIR` without --image; with an image: docker build -t demo:ci DIR && ocm-lab registry push demo:ci' },
      );
    }
    const config = await loadLabConfig(argv.config);
    const quiet = argv.output === 'json';
    const progress = (line: string) => {
      if (!quiet) process.stderr.write(`${line}\n`);
    };
    const session = await DevSession.open(config, argv.dir, { progress, timeoutMs: argv.timeout * 1000, image: argv.image?.trim() });
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
