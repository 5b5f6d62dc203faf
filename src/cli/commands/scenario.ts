import type { CommandModule } from 'yargs';
import { loadLabConfig, type LabConfig } from '../../config/index.js';
import { LabError } from '../../errors.js';
import {
  describeFailure,
  DEFAULT_SCENARIO_DIR,
  killActiveBlocks,
  listScenarios,
  rendererForTerminal,
  runConformance,
  type ConformanceOptions,
  type ConformanceResult,
} from '../../scenario/index.js';
import { emit, renderTable, type GlobalOptions } from '../output.js';

function summarise(result: ConformanceResult): string {
  const rows = result.results.map(({ scenario, result: r }) => [
    scenario.name,
    r.status.toUpperCase(),
    r.status === 'skipped' ? '-' : `${r.steps.filter((s) => s.status === 'passed').length}/${r.steps.length}`,
    `${(r.durationMs / 1000).toFixed(1)} s`,
    r.skipReason ?? (r.status === 'failed' ? `line ${r.steps.find((s) => s.status === 'failed')?.step.line ?? '?'}` : ''),
  ]);
  for (const name of result.notRun) rows.push([name, 'NOT RUN', '-', '-', result.interrupted ? 'interrupted' : 'an earlier document failed']);
  const notRun = result.notRun.length ? `, ${result.notRun.length} not run` : '';
  const seconds = (result.durationMs / 1000).toFixed(1);
  const totals = `${result.passed} passed, ${result.failed} failed, ${result.skipped} skipped${notRun} on lab ${result.lab} in ${seconds} s`;
  const files = result.transcripts.length ? `\ntranscripts: ${result.transcripts.join(', ')}` : '';
  return `${renderTable(['SCENARIO', 'RESULT', 'STEPS', 'TIME', 'NOTE'], rows)}\n\n${totals}${files}`;
}

/** The result for scripts: statuses, reasons and failures. */
function resultJson(result: ConformanceResult) {
  return {
    lab: result.lab,
    passed: result.passed,
    failed: result.failed,
    skipped: result.skipped,
    notRun: result.notRun,
    interrupted: result.interrupted,
    durationMs: result.durationMs,
    transcripts: result.transcripts,
    scenarios: result.results.map(({ scenario, result: r }) => ({
      name: scenario.name,
      file: scenario.file,
      status: r.status,
      skipReason: r.skipReason ?? null,
      durationMs: r.durationMs,
      steps: r.steps.map((s) => ({
        line: s.step.line,
        cleanup: s.step.cleanup,
        command: s.step.code.trim().split('\n')[0] ?? '',
        status: s.status,
        exitCode: s.exitCode,
        failure: s.failure ?? null,
        expectationLine: s.failedExpectation?.line ?? null,
        durationMs: s.durationMs,
      })),
    })),
  };
}

type RunFlags = GlobalOptions & { dir?: string; transcript?: string };

/**
 * Runs documents with progress on stderr, Ctrl-C handling, failure details, then the summary on stdout.
 * `afterRun` sees every completed run, failed ones included, before the command fails (`conformance --summary`).
 */
export async function runDocumentsFromCli(
  argv: RunFlags,
  options: ConformanceOptions,
  afterRun?: (result: ConformanceResult, config: LabConfig) => Promise<void>,
): Promise<void> {
  const config = await loadLabConfig(argv.config);
  const controller = new AbortController();
  let interrupts = 0;
  const onSignal = () => {
    interrupts++;
    if (interrupts === 1) {
      process.stderr.write('\ninterrupted: ending the running block, then running cleanup blocks (interrupt again to stop at once)\n');
      controller.abort();
    } else {
      killActiveBlocks();
      process.exit(130);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const renderer = rendererForTerminal();
  let result: ConformanceResult;
  try {
    result = await runConformance(config, {
      dir: argv.dir,
      transcriptDir: argv.transcript,
      renderer,
      showOutput: renderer === 'default' || argv.verbose,
      signal: controller.signal,
      ...options,
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  for (const { scenario, result: r } of result.results) {
    for (const step of r.steps.filter((s) => s.status === 'failed')) process.stderr.write(`\n${describeFailure(scenario, step)}\n`);
  }
  emit(argv, resultJson(result), () => summarise(result));
  if (afterRun) await afterRun(result, config);
  if (result.interrupted) throw new LabError('failure', 'interrupted; cleanup blocks of the running document were run');
  if (result.failed) {
    const names = result.results.filter((r) => r.result.status === 'failed').map((r) => r.scenario.name);
    throw new LabError('failure', `${result.failed} scenario(s) failed: ${names.join(', ')}`, {
      hint: 'the failing step, its command, what was expected and what came out are printed above',
    });
  }
}

const dirOption = { type: 'string', describe: `folder of documents (default: ${DEFAULT_SCENARIO_DIR})` } as const;
const transcriptOption = {
  type: 'string',
  describe: 'write each document back with the real output under every block to this folder (.md and .html)',
} as const;

const listCommand: CommandModule<GlobalOptions, GlobalOptions & { dir?: string }> = {
  command: 'list',
  describe: 'list the executable documents and what each needs',
  builder: (y) => y.option('dir', dirOption),
  handler: async (argv) => {
    const scenarios = await listScenarios(argv.dir ?? DEFAULT_SCENARIO_DIR);
    emit(
      argv,
      scenarios.map((s) => ({ name: s.name, title: s.title, summary: s.summary, requires: s.requires, steps: s.steps.length, file: s.file })),
      (rows) =>
        renderTable(
          ['NAME', 'STEPS', 'CLUSTERS', 'NEEDS', 'TITLE'],
          rows.map((r) => [
            r.name,
            String(r.steps),
            r.requires.clusters.join(','),
            [...r.requires.capabilities, ...r.requires.addons].join(',') || '-',
            r.title,
          ]),
        ),
    );
  },
};

const runCommand: CommandModule<GlobalOptions, RunFlags & { names: string[]; 'keep-going': boolean }> = {
  command: 'run <names..>',
  describe: 'run documents against the lab, in the order given',
  builder: (y) =>
    y
      .positional('names', { type: 'string', array: true, demandOption: true, describe: 'document names (see scenario list)' })
      .option('keep-going', { type: 'boolean', default: false, describe: 'run the next document after one fails' })
      .option('transcript', transcriptOption)
      .option('dir', dirOption),
  handler: async (argv) => {
    await runDocumentsFromCli(argv, { names: argv.names, keepGoing: argv['keep-going'], requireAll: true });
  },
};

export const scenarioCommand: CommandModule<GlobalOptions, GlobalOptions> = {
  command: 'scenario <command>',
  describe: 'executable documents (walkthroughs with expected output): list or run them',
  builder: (y) => y.command(listCommand).command(runCommand).demandCommand(1),
  handler: () => undefined,
};
