import type { CommandModule } from 'yargs';
import { loadLabConfig } from '../../config/index.js';
import { LabError, NotFoundError } from '../../errors.js';
import { describeFailure, listScenarios, runConformance, selectScenarios, type ConformanceOptions, type ConformanceResult } from '../../scenario/index.js';
import { emit, renderTable, type GlobalOptions } from '../output.js';

/** Step-by-step progress on stderr, so stdout stays the result (text or JSON). */
export function progressPrinter(): Pick<ConformanceOptions, 'onScenario' | 'onStepDone' | 'onScenarioDone'> {
  const err = (line: string) => process.stderr.write(`${line}\n`);
  return {
    onScenario: (s) => err(`▶ ${s.name}: ${s.title}`),
    onStepDone: (s, r) => {
      const first = r.step.code.trim().split('\n')[0] ?? '';
      err(`  ${r.status === 'passed' ? '✔' : '✖'} ${s.name}.md:${r.step.line}${r.step.cleanup ? ' (cleanup)' : ''}  ${first.slice(0, 90)}  [${(r.durationMs / 1000).toFixed(1)} s]`);
      if (r.status === 'failed') err(describeFailure(s, r).replace(/^/gm, '    '));
    },
    onScenarioDone: (s, r) => err(`${r.status === 'passed' ? '✔' : r.status === 'skipped' ? '↷' : '✖'} ${s.name}: ${r.status}${r.skipReason ? ` (${r.skipReason})` : ''}`),
  };
}

export function summarise(result: ConformanceResult): string {
  return renderTable(
    ['SCENARIO', 'RESULT', 'STEPS', 'TIME', 'NOTE'],
    result.results.map(({ scenario, result: r }) => [
      scenario.name,
      r.status.toUpperCase(),
      `${r.steps.filter((s) => s.status === 'passed').length}/${r.steps.length}`,
      `${(r.durationMs / 1000).toFixed(1)} s`,
      r.skipReason ?? '',
    ]),
  ) + `\n\n${result.passed} passed, ${result.failed} failed, ${result.skipped} skipped`;
}

/** The result for scripts: statuses and failures, not the documents themselves. */
export function resultJson(result: ConformanceResult) {
  return {
    lab: result.lab,
    passed: result.passed,
    failed: result.failed,
    skipped: result.skipped,
    scenarios: result.results.map(({ scenario, result: r }) => ({
      name: scenario.name,
      file: scenario.file,
      status: r.status,
      skipReason: r.skipReason ?? null,
      durationMs: r.durationMs,
      steps: r.steps.map((s) => ({ line: s.step.line, status: s.status, exitCode: s.exitCode, failure: s.failure ?? null, durationMs: s.durationMs })),
    })),
  };
}

export function failIfFailed(result: ConformanceResult): void {
  if (result.failed) throw new LabError('failure', `${result.failed} scenario(s) failed: ${result.results.filter((r) => r.result.status === 'failed').map((r) => r.scenario.name).join(', ')}`);
}

type RunArgs = GlobalOptions & { names: string[]; 'keep-going': boolean; transcript?: string };

const listCommand: CommandModule<GlobalOptions, GlobalOptions> = {
  command: 'list',
  describe: 'list the executable documents',
  handler: async (argv) => {
    const scenarios = await listScenarios();
    emit(
      argv,
      scenarios.map((s) => ({ name: s.name, title: s.title, summary: s.summary, requires: s.requires, steps: s.steps.length, file: s.file })),
      (rows) => renderTable(['NAME', 'STEPS', 'REQUIRES', 'TITLE'], rows.map((r) => [r.name, String(r.steps), [...r.requires.capabilities, ...r.requires.addons].join(',') || '-', r.title])),
    );
  },
};

const runCommand: CommandModule<GlobalOptions, RunArgs> = {
  command: 'run <names..>',
  describe: 'run documents against the lab',
  builder: (y) =>
    y
      .positional('names', { type: 'string', array: true, demandOption: true, describe: 'scenario names (see scenario list)' })
      .option('keep-going', { type: 'boolean', default: false, describe: 'run the next document after one fails' })
      .option('transcript', { type: 'string', describe: 'write each document with its real output to this directory (.md and .html)' }),
  handler: async (argv) => {
    const config = await loadLabConfig(argv.config);
    const chosen = await selectScenarios(argv.names);
    const result = await runConformance(config, { names: chosen.map((s) => s.name), keepGoing: argv['keep-going'], transcriptDir: argv.transcript, ...progressPrinter() });
    const skipped = result.results.find((r) => r.result.status === 'skipped');
    if (skipped) throw new NotFoundError(`scenario '${skipped.scenario.name}' cannot run on this lab: ${skipped.result.skipReason ?? ''}`);
    emit(argv, resultJson(result), () => summarise(result));
    failIfFailed(result);
  },
};

export const scenarioCommand: CommandModule<GlobalOptions, GlobalOptions> = {
  command: 'scenario <command>',
  describe: 'executable documents: list or run them',
  builder: (y) => y.command(listCommand).command(runCommand).demandCommand(1),
  handler: () => undefined,
};
