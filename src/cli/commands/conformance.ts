import type { CommandModule } from 'yargs';
import { DEFAULT_SCENARIO_DIR } from '../../scenario/index.js';
import type { GlobalOptions } from '../output.js';
import { runDocumentsFromCli } from './scenario.js';

type Args = GlobalOptions & { junit?: string; only?: string; transcript?: string; dir?: string };

export const conformanceCommand: CommandModule<GlobalOptions, Args> = {
  command: 'conformance',
  describe: 'run every document against the lab; documents the lab cannot run are skipped with the reason',
  builder: (y) =>
    y
      .option('junit', { type: 'string', describe: 'write JUnit XML here (a testsuite per document, a testcase per block)' })
      .option('only', { type: 'string', describe: 'only documents whose name matches this regular expression' })
      .option('transcript', { type: 'string', describe: 'write each document back with its real output to this folder (.md and .html)' })
      .option('dir', { type: 'string', describe: `folder of documents (default: ${DEFAULT_SCENARIO_DIR})` }),
  handler: async (argv) => {
    await runDocumentsFromCli(argv, { only: argv.only, junitFile: argv.junit, keepGoing: true });
  },
};
