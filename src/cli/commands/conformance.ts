import type { CommandModule } from 'yargs';
import { DEFAULT_SCENARIO_DIR } from '../../scenario/index.js';
import { labRuntimeName } from '../../runtime/registry.js';
import { labCell, writeConformanceSummary } from '../../scenario/summary.js';
import type { GlobalOptions } from '../output.js';
import { runDocumentsFromCli } from './scenario.js';

type Args = GlobalOptions & { junit?: string; summary?: string; only?: string; transcript?: string; dir?: string };

export const conformanceCommand: CommandModule<GlobalOptions, Args> = {
  command: 'conformance',
  describe: 'run every document against the lab; documents the lab cannot run are skipped with the reason',
  builder: (y) =>
    y
      .option('junit', { type: 'string', describe: 'write JUnit XML here (a testsuite per document, a testcase per block)' })
      .option('summary', {
        type: 'string',
        describe:
          "write a Markdown table here: the lab's runtime, Kubernetes version and addon implementations, " +
          "then each document's result and time (for a CI job summary)",
      })
      .option('only', { type: 'string', describe: 'only documents whose name matches this regular expression' })
      .option('transcript', { type: 'string', describe: 'write each document back with its real output to this folder (.md and .html)' })
      .option('dir', { type: 'string', describe: `folder of documents (default: ${DEFAULT_SCENARIO_DIR})` }),
  handler: async (argv) => {
    const summaryFile = argv.summary;
    await runDocumentsFromCli(
      argv,
      { only: argv.only, junitFile: argv.junit, keepGoing: true },
      summaryFile
        ? async (result, config) => writeConformanceSummary(summaryFile, await labCell(config, await labRuntimeName(config.name)), result)
        : undefined,
    );
  },
};
