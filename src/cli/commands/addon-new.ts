import path from 'node:path';
import type { CommandModule } from 'yargs';
import { writeProject } from '../../addons/dev/scaffold.js';
import { validateAddonName } from '../../addons/dev/names.js';
import { emit, type GlobalOptions } from '../output.js';

type Args = GlobalOptions & { name: string; dir?: string };

/** `ocm-lab addon new NAME [DIR]`: a new addon project (manager, agent, unit test, scenario). */
export const addonNewCommand: CommandModule<GlobalOptions, Args> = {
  command: 'new <name> [dir]',
  describe: 'write a new TypeScript addon project (default folder: ./NAME)',
  builder: (y) =>
    y
      .positional('name', { type: 'string', demandOption: true, describe: 'the addon name (a DNS-1123 label)' })
      .positional('dir', { type: 'string', describe: 'where to write it (missing or empty)' }) as never,
  handler: async (argv) => {
    const name = validateAddonName(argv.name);
    const written = await writeProject(name, argv.dir ?? name);
    const rel = path.relative(process.cwd(), written.dir) || '.';
    emit(argv, written, (w) =>
      [
        `wrote the ${name} addon to ${w.dir}:`,
        ...w.files.map((f) => `  ${f}`),
        '',
        'next:',
        `  (cd ${rel} && npm test)            # its unit test`,
        `  ocm-lab addon dev ${rel}            # load it into the running lab, reload on every save`,
        `  ocm-lab conformance --dir ${path.join(rel, 'scenarios')}   # its scenario`,
      ].join('\n'),
    );
  },
};
