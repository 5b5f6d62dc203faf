import type { CommandModule } from 'yargs';
import type { LabConfig } from '../../config/index.js';
import { labStatus } from '../../lab/lifecycle.js';
import { DEFAULT_SCENARIO_DIR, type ConformanceResult } from '../../scenario/index.js';
import { labRuntimeName } from '../../runtime/registry.js';
import { writeConformanceReport } from '../../scenario/report.js';
import { implementationsLabel, labCell, writeConformanceSummary } from '../../scenario/summary.js';
import type { GlobalOptions } from '../output.js';
import { runDocumentsFromCli } from './scenario.js';

type Args = GlobalOptions & { junit?: string; summary?: string; html?: string; only?: string; transcript?: string; dir?: string };

/** The lab's picture for the report, drawn after the run; a lab that cannot be pictured leaves the report without one. */
async function pictureOf(config: LabConfig): Promise<string | undefined> {
  try {
    const [{ gatherLabPicture }, { labPictureSvg }] = await Promise.all([import('../../lab/picture-model.js'), import('../../lab/picture.js')]);
    return labPictureSvg(await gatherLabPicture(config, await labStatus(config)));
  } catch (err) {
    process.stderr.write(`conformance --html: no picture of the lab: ${(err as Error).message}\n`);
    return undefined;
  }
}

async function writeReports(argv: Args, result: ConformanceResult, config: LabConfig): Promise<void> {
  if (!argv.summary && !argv.html) return;
  const cell = await labCell(config, await labRuntimeName(config.name));
  if (argv.summary) await writeConformanceSummary(argv.summary, cell, result);
  if (argv.html) {
    const line = `${cell.runtime} · Kubernetes ${cell.kubernetesVersion} · OCM ${cell.ocmVersion} · addons: ${implementationsLabel(cell.addons)}`;
    await writeConformanceReport(argv.html, result, { cell: line, pictureSvg: await pictureOf(config) });
    if (argv.output !== 'json') process.stderr.write(`report: ${argv.html}\n`);
  }
}

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
      .option('html', {
        type: 'string',
        describe: "write an HTML report here: the lab's picture, then every document with its steps, outputs and timings",
      })
      .option('only', { type: 'string', describe: 'only documents whose name matches this regular expression' })
      .option('transcript', { type: 'string', describe: 'write each document back with its real output to this folder (.md and .html)' })
      .option('dir', { type: 'string', describe: `folder of documents (default: ${DEFAULT_SCENARIO_DIR})` }),
  handler: async (argv) => {
    await runDocumentsFromCli(argv, { only: argv.only, junitFile: argv.junit, keepGoing: true }, (result, config) => writeReports(argv, result, config));
  },
};
