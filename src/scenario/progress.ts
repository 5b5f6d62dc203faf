import { Listr, ListrLogger, ProcessOutput, type ListrTask } from 'listr2';
import type { ScenarioEnvironment } from './environment.js';
import { missingRequirement, ScenarioRun, skippedResult, stepTitle } from './run.js';
import { writeTranscripts } from './transcript.js';
import type { Scenario, ScenarioResult } from './types.js';

export type ProgressRenderer = 'default' | 'simple' | 'silent';

export interface RunScenariosOptions {
  /** listr2 renderer on stderr; 'silent' (the default) shows nothing. */
  renderer?: ProgressRenderer;
  /** Show each block's latest output line while it runs. */
  showOutput?: boolean;
  /** Run the next document after one fails (default true). */
  keepGoing?: boolean;
  /** Write `<name>.md` and `<name>.html` transcripts of every document that ran. */
  transcriptDir?: string;
  /** Aborting kills the running block (cleanup blocks still run) and runs no further document. */
  signal?: AbortSignal;
}

interface ScenarioOutcome {
  scenario: Scenario;
  result: ScenarioResult;
}

export interface RunSummary {
  lab: string;
  passed: number;
  failed: number;
  skipped: number;
  durationMs: number;
  /** In the order they ran; skipped documents included. */
  results: ScenarioOutcome[];
  /** Documents never started: after a failure without keepGoing, or after an interruption. */
  notRun: string[];
  interrupted: boolean;
  /** Files written by transcriptDir. */
  transcripts: string[];
}

/** The renderer for a person at a terminal, or plain lines for logs and CI. */
export function rendererForTerminal(stream: NodeJS.WriteStream = process.stderr): ProgressRenderer {
  return stream.isTTY && !process.env.CI ? 'default' : 'simple';
}

function lastLine(chunk: string): string | null {
  const lines = chunk
    .split('\n')
    .map((l) => l.trimEnd())
    .filter(Boolean);
  return lines.length ? lines[lines.length - 1]! : null;
}

/**
 * Runs documents in order against one lab, each as a listr2 task whose
 * subtasks are its blocks. A document whose requirements the lab lacks is
 * skipped with the reason.
 */
export async function runScenarios(scenarios: readonly Scenario[], environment: ScenarioEnvironment, options: RunScenariosOptions = {}): Promise<RunSummary> {
  const started = Date.now();
  const keepGoing = options.keepGoing ?? true;
  const results: ScenarioOutcome[] = [];
  const notRun: string[] = [];
  const transcripts: string[] = [];
  let stopReason: string | null = null;

  const tasks: ListrTask[] = scenarios.map((scenario) => ({
    title: `${scenario.name}: ${scenario.title}`,
    task: async (_ctx, task) => {
      if (options.signal?.aborted) stopReason ??= 'interrupted';
      if (stopReason) {
        notRun.push(scenario.name);
        task.skip(`${scenario.name}: not run (${stopReason})`);
        return;
      }
      const missing = missingRequirement(scenario, environment);
      if (missing) {
        results.push({ scenario, result: skippedResult(scenario, missing) });
        task.skip(`${scenario.name}: skipped — ${missing}`);
        return;
      }
      const run = await ScenarioRun.start(scenario, environment);
      let result: ScenarioResult;
      try {
        await task
          .newListr(
            scenario.steps.map((step): ListrTask => ({
              title: stepTitle(scenario, step),
              task: async (_c, t) => {
                const r = await run.runStep(step, {
                  signal: options.signal,
                  onOutput: options.showOutput
                    ? (chunk) => {
                        const line = lastLine(chunk);
                        if (line) t.output = line;
                      }
                    : undefined,
                });
                if (r.status === 'not-run') t.skip(`${stepTitle(scenario, step)}: not run`);
                else t.title = `${stepTitle(scenario, step)}  [${(r.durationMs / 1000).toFixed(1)} s]`;
                if (r.status === 'failed') throw new Error((r.failure ?? 'failed').split('\n')[0]);
              },
              rendererOptions: { persistentOutput: false, outputBar: 1 },
            })),
            { exitOnError: false, concurrent: false },
          )
          .run();
      } finally {
        result = await run.finish();
      }
      results.push({ scenario, result });
      if (options.transcriptDir) transcripts.push(...(await writeTranscripts(options.transcriptDir, scenario, result, { lab: environment.labName })));
      task.title = `${scenario.name}: ${result.status} (${(result.durationMs / 1000).toFixed(1)} s)`;
      if (options.signal?.aborted) stopReason = 'interrupted';
      if (result.status === 'failed') {
        if (!keepGoing) stopReason ??= `${scenario.name} failed`;
        throw new Error(
          `failed at ${result.steps
            .filter((s) => s.status === 'failed')
            .map((s) => `${scenario.name}.md:${s.step.line}`)
            .join(', ')}`,
        );
      }
    },
  }));

  const logger = new ListrLogger({ processOutput: new ProcessOutput(process.stderr, process.stderr) });
  await new Listr(tasks, {
    renderer: options.renderer ?? 'silent',
    fallbackRenderer: 'simple',
    exitOnError: false,
    rendererOptions: { logger, collapseSubtasks: false, collapseSkips: false, showErrorMessage: true },
    fallbackRendererOptions: { logger },
  }).run();

  const count = (status: ScenarioResult['status']) => results.filter((r) => r.result.status === status).length;
  return {
    lab: environment.labName,
    passed: count('passed'),
    failed: count('failed'),
    skipped: count('skipped'),
    durationMs: Date.now() - started,
    results,
    notRun,
    interrupted: !!options.signal?.aborted,
    transcripts,
  };
}
