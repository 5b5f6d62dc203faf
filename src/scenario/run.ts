import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { checkExpectation } from './expect.js';
import type { ScenarioEnvironment } from './environment.js';
import type { Scenario, ScenarioResult, Step, StepResult } from './types.js';

export interface RunEvents {
  onStep?: (scenario: Scenario, step: Step, index: number) => void;
  onStepDone?: (scenario: Scenario, result: StepResult, index: number) => void;
}

const MAX_OUTPUT = 1 << 20;

/** JavaScript blocks get zx's `$` and a `waitFor(check, {timeout})` that polls until check() is truthy. */
function jsProgram(code: string): string {
  const zx = import.meta.resolve('zx');
  return [
    `import { $, fs, path } from ${JSON.stringify(zx)};`,
    '$.verbose = false;',
    'const waitFor = async (check, { timeout = 60000, interval = 500 } = {}) => {',
    '  const deadline = Date.now() + timeout; let last;',
    '  while (Date.now() < deadline) { try { last = await check(); if (last) return last; } catch (e) { last = e; } await new Promise((r) => setTimeout(r, interval)); }',
    '  throw new Error(`waitFor: condition not met within ${timeout} ms (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);',
    '};',
    code,
  ].join('\n');
}

/** Shell blocks run with bash -euo pipefail; exported variables carry over to later blocks of the same document. */
function shProgram(code: string, stateFile: string): string {
  const q = JSON.stringify(stateFile);
  return [`if [ -f ${q} ]; then . ${q}; fi`, `trap 'export -p > ${q}' EXIT`, code].join('\n');
}

function execute(step: Step, env: NodeJS.ProcessEnv, stateFile: string, cwd: string): Promise<{ exitCode: number | null; output: string; timedOut: boolean }> {
  const [file, args] =
    step.language === 'sh' ? ['bash', ['-euo', 'pipefail', '-c', shProgram(step.code, stateFile)]] : [process.execPath, ['--input-type=module', '-e', jsProgram(step.code)]];
  return new Promise((resolve) => {
    const child = spawn(file as string, args as string[], { env, cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (chunk: Buffer) => {
      if (output.length < MAX_OUTPUT) output += chunk.toString('utf8');
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-(child.pid as number), 'SIGKILL'); // the whole group: nothing the block started survives
      } catch {
        /* already gone */
      }
    }, step.timeoutSeconds * 1000);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ exitCode: null, output: `could not start ${file}: ${err.message}`, timedOut });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ exitCode: code, output, timedOut });
    });
  });
}

export async function runStep(step: Step, env: NodeJS.ProcessEnv, stateFile: string, cwd: string): Promise<StepResult> {
  const started = Date.now();
  const { exitCode, output, timedOut } = await execute(step, env, stateFile, cwd);
  const durationMs = Date.now() - started;
  if (timedOut) return { step, status: 'failed', exitCode, output, durationMs, failure: `timed out after ${step.timeoutSeconds} s (process group killed)` };
  const expectations = step.expectations.length ? step.expectations : [{ kind: 'contains' as const, text: '', line: step.line }];
  for (const e of expectations) {
    const why = e.text === '' && e.kind === 'contains' ? (exitCode === 0 ? null : `the command failed with exit status ${String(exitCode)}`) : checkExpectation(e, output, exitCode);
    if (why) return { step, status: 'failed', exitCode, output, durationMs, failure: why };
  }
  return { step, status: 'passed', exitCode, output, durationMs };
}

/** Why the lab cannot run this scenario, or null. */
export function missingRequirement(scenario: Scenario, env: ScenarioEnvironment): string | null {
  const clusters = scenario.requires.clusters.filter((c) => !env.clusters.includes(c));
  if (clusters.length) return `the lab has no cluster ${clusters.join(', ')}`;
  const addons = scenario.requires.addons.filter((a) => !env.addons.includes(a));
  if (addons.length) return `the lab does not install ${addons.join(', ')}`;
  const caps = scenario.requires.capabilities.filter((c) => !env.capabilities.includes(c));
  if (caps.length) return `the lab lacks ${caps.join(', ')}`;
  return null;
}

/** Runs a scenario's blocks in order; after a failure only cleanup blocks run, and they always run. */
export async function runScenario(scenario: Scenario, env: ScenarioEnvironment, events: RunEvents = {}): Promise<ScenarioResult> {
  const started = Date.now();
  const missing = missingRequirement(scenario, env);
  if (missing) return { name: scenario.name, title: scenario.title, status: 'skipped', skipReason: missing, durationMs: 0, steps: [] };
  const work = await fs.mkdtemp(path.join(os.tmpdir(), `ocm-lab-scenario-${scenario.name}-`));
  const stateFile = path.join(work, '.exported-env');
  const results: StepResult[] = [];
  let failed = false;
  try {
    for (const [index, step] of scenario.steps.entries()) {
      if (failed && !step.cleanup) {
        results.push({ step, status: 'not-run', exitCode: null, output: '', durationMs: 0 });
        continue;
      }
      events.onStep?.(scenario, step, index);
      const result = await runStep(step, { ...env.env }, stateFile, work);
      results.push(result);
      events.onStepDone?.(scenario, result, index);
      if (result.status === 'failed') failed = true;
    }
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
  return { name: scenario.name, title: scenario.title, status: failed ? 'failed' : 'passed', durationMs: Date.now() - started, steps: results };
}

/** What a person needs to see when a step fails: where, what ran, what was expected, what came out. */
export function describeFailure(scenario: Scenario, result: StepResult): string {
  return [
    `${scenario.file}:${result.step.line}: step failed: ${result.failure ?? ''}`,
    '--- command ---',
    result.step.code.trimEnd(),
    ...result.step.expectations.map((e) => `--- expected (${e.kind}, line ${e.line}) ---\n${e.text}`),
    `--- output (exit status ${String(result.exitCode)}) ---`,
    result.output.trimEnd() || '(nothing)',
  ].join('\n');
}
