import type { CommandModule } from 'yargs';
import { loadLabConfig } from '../../config/index.js';
import { runConformance } from '../../scenario/index.js';
import { emit, type GlobalOptions } from '../output.js';
import { failIfFailed, progressPrinter, resultJson, summarise } from './scenario.js';

type Args = GlobalOptions & { junit?: string; only?: string; transcript?: string };

export const conformanceCommand: CommandModule<GlobalOptions, Args> = {
  command: 'conformance',
  describe: 'run every document against the lab; documents the lab cannot run are skipped with the reason',
  builder: (y) =>
    y
      .option('junit', { type: 'string', describe: 'write JUnit XML here' })
      .option('only', { type: 'string', describe: 'only documents whose name matches this regular expression' })
      .option('transcript', { type: 'string', describe: 'write each document with its real output to this directory' }),
  handler: async (argv) => {
    const config = await loadLabConfig(argv.config);
    const result = await runConformance(config, { only: argv.only, junitFile: argv.junit, transcriptDir: argv.transcript, keepGoing: true, ...progressPrinter() });
    emit(argv, resultJson(result), () => summarise(result));
    failIfFailed(result);
  },
};
