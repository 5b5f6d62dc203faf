import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { blockEnvironment, type ScenarioEnvironment } from './environment.js';
import { executeBlock } from './execute.js';
import { judgeStep } from './expect.js';
import type { Scenario, ScenarioResult, Step, StepResult } from './types.js';

/** Why the lab cannot run this scenario (`the lab lacks …`), or null. */
export function missingRequirement(scenario: Scenario, env: Pick<ScenarioEnvironment, 'clusters' | 'addons' | 'capabilities'>): string | null {
  const lacks: string[] = [];
  const note = (one: string, many: string, names: string[]) => {
    if (names.length) lacks.push(`${names.length === 1 ? one : many} ${names.join(', ')}`);
  };
  note(
    'cluster',
    'clusters',
    scenario.requires.clusters.filter((c) => !env.clusters.includes(c)),
  );
  note(
    'addon',
    'addons',
    scenario.requires.addons.filter((a) => !env.addons.includes(a)),
  );
  note(
    'capability',
    'capabilities',
    scenario.requires.capabilities.filter((c) => !env.capabilities.includes(c)),
  );
  return lacks.length ? `the lab lacks ${lacks.join('; ')}` : null;
}

export interface StepOptions {
  signal?: AbortSignal;
  onOutput?: (chunk: string) => void;
}

/**
 * Runs one block of a document in `workDir` (shared by the document's blocks, with the variables
 * they export) and judges its output: the step's code may differ from the document's (a tutorial
 * reader edited it), its expectations are the document's.
 */
export async function executeStep(
  scenario: Scenario,
  environment: ScenarioEnvironment,
  workDir: string,
  step: Step,
  options: StepOptions = {},
): Promise<StepResult> {
  const outcome = await executeBlock({
    language: step.language,
    code: step.code,
    timeoutSeconds: step.timeoutSeconds,
    env: { ...blockEnvironment(environment), OCM_LAB_SCENARIO: scenario.name },
    cwd: workDir,
    stateFile: path.join(workDir, '.exported-variables'),
    source: { file: scenario.file, line: step.line },
    // Cleanup blocks run even when the run was interrupted: they leave the lab as it was.
    signal: step.cleanup ? undefined : options.signal,
    onOutput: options.onOutput,
  });
  const base = { step, exitCode: outcome.exitCode, output: outcome.output, durationMs: outcome.durationMs };
  if (outcome.timedOut)
    return {
      ...base,
      status: 'failed',
      failure: `timed out after ${step.timeoutSeconds} s (its process group was killed); raise it with timeout=<seconds> on the block`,
    };
  if (outcome.interrupted) return { ...base, status: 'failed', failure: 'interrupted (its process group was killed)' };
  const verdict = judgeStep(step, outcome.output, outcome.exitCode);
  if (verdict.failure)
    return { ...base, status: 'failed', failure: verdict.failure, ...(verdict.expectation ? { failedExpectation: verdict.expectation } : {}) };
  return { ...base, status: 'passed' };
}

/**
 * One document being run, a block at a time. After a failure only cleanup
 * blocks run (the others are recorded as not run); cleanup blocks always run.
 * Blocks share a temporary working directory and the variables they export.
 */
export class ScenarioRun {
  readonly results: StepResult[] = [];
  private readonly started = Date.now();
  private failed = false;

  private constructor(
    readonly scenario: Scenario,
    private readonly environment: ScenarioEnvironment,
    private readonly workDir: string,
  ) {}

  static async start(scenario: Scenario, environment: ScenarioEnvironment): Promise<ScenarioRun> {
    const workDir = await fs.mkdtemp(path.join(os.tmpdir(), `ocm-lab-scenario-${scenario.name}-`));
    return new ScenarioRun(scenario, environment, workDir);
  }

  get hasFailed(): boolean {
    return this.failed;
  }

  async runStep(step: Step, options: StepOptions = {}): Promise<StepResult> {
    let result: StepResult;
    if (this.failed && !step.cleanup) {
      result = { step, status: 'not-run', exitCode: null, output: '', durationMs: 0 };
    } else if (options.signal?.aborted && !step.cleanup) {
      result = { step, status: 'failed', exitCode: null, output: '', durationMs: 0, failure: 'interrupted before it started' };
    } else {
      result = await this.execute(step, options);
    }
    if (result.status === 'failed') this.failed = true;
    this.results.push(result);
    return result;
  }

  private execute(step: Step, options: StepOptions): Promise<StepResult> {
    return executeStep(this.scenario, this.environment, this.workDir, step, options);
  }

  /** Removes the working directory and sums up. */
  async finish(): Promise<ScenarioResult> {
    await fs.rm(this.workDir, { recursive: true, force: true });
    const { scenario } = this;
    return {
      name: scenario.name,
      title: scenario.title,
      status: this.failed ? 'failed' : 'passed',
      durationMs: Date.now() - this.started,
      steps: this.results,
    };
  }
}

export function skippedResult(scenario: Scenario, reason: string): ScenarioResult {
  return { name: scenario.name, title: scenario.title, status: 'skipped', skipReason: reason, durationMs: 0, steps: [] };
}

export interface RunScenarioOptions {
  signal?: AbortSignal;
  onStep?: (step: Step) => void;
  onStepDone?: (result: StepResult) => void;
}

/** Runs one document without progress display: skipped when the lab lacks what it requires. */
export async function runScenario(scenario: Scenario, environment: ScenarioEnvironment, options: RunScenarioOptions = {}): Promise<ScenarioResult> {
  const missing = missingRequirement(scenario, environment);
  if (missing) return skippedResult(scenario, missing);
  const run = await ScenarioRun.start(scenario, environment);
  try {
    for (const step of scenario.steps) {
      options.onStep?.(step);
      const result = await run.runStep(step, { signal: options.signal });
      options.onStepDone?.(result);
    }
  } catch (err) {
    await run.finish().catch(() => undefined);
    throw err;
  }
  return run.finish();
}

/** One line naming a step: where it is and how its code starts. */
export function stepTitle(scenario: Pick<Scenario, 'name'>, step: Step): string {
  const first = step.code.trim().split('\n')[0] ?? '';
  const more = step.code.trim().includes('\n') ? ' …' : '';
  return `${scenario.name}.md:${step.line}${step.cleanup ? ' (cleanup)' : ''}  ${first.length > 80 ? `${first.slice(0, 79)}…` : first}${more}`;
}

/** What a person needs when a step fails: where, what ran, what was expected, what came out. */
export function describeFailure(scenario: Pick<Scenario, 'file'>, result: StepResult): string {
  const { step } = result;
  const expected = result.failedExpectation
    ? [`--- expected (expect ${result.failedExpectation.kind}, line ${result.failedExpectation.line}) ---`, result.failedExpectation.text || '(a failure)']
    : [
        '--- expected ---',
        step.expectations.some((e) => e.kind === 'fails') ? 'the command to fail' : `the command to succeed within ${step.timeoutSeconds} s`,
        ...step.expectations.filter((e) => e.kind !== 'fails').map((e) => `and then (expect ${e.kind}, line ${e.line}):\n${e.text}`),
      ];
  return [
    `${scenario.file}:${step.line}: step failed: ${result.failure ?? ''}`,
    `--- command (${step.language}, line ${step.line}) ---`,
    step.code.trimEnd(),
    ...expected,
    `--- output (exit status ${result.exitCode === null ? 'none' : result.exitCode}, ${(result.durationMs / 1000).toFixed(1)} s) ---`,
    result.output.trimEnd() || '(no output)',
  ].join('\n');
}
