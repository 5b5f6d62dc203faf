import type { CommandModule } from 'yargs';
import { writeAddonBundles } from '../../addons/dev/build.js';
import { emit, type GlobalOptions } from '../output.js';

type Args = GlobalOptions & { dir: string; out: string };

/** `ocm-lab addon build DIR --out OUT`: the project's manager and agent bundles as files, for its image (its Dockerfile runs it). */
export const addonBuildCommand: CommandModule<GlobalOptions, Args> = {
  command: 'build <dir>',
  describe: "bundle an addon project's manager and agent into OUT/manager.mjs and OUT/agent.mjs (what its Dockerfile puts in its image)",
  builder: (y) =>
    y
      .positional('dir', { type: 'string', demandOption: true, describe: 'the project (from ocm-lab addon new)' })
      .option('out', { type: 'string', demandOption: true, describe: 'the folder to write (replaced whole)' }) as never,
  handler: async (argv) => {
    const built = await writeAddonBundles(argv.dir, argv.out);
    emit(argv, built, (b) => [`built the ${b.addon} addon in ${b.ms} ms:`, ...b.files.map((f) => `  ${f}`)].join('\n'));
  },
};
