import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { ExitCode } from '../errors.js';
import type { ScenarioEnvironment } from './environment.js';
import { scanFences } from './markdown.js';
import { killActiveBlocks } from './execute.js';
import { executeStep } from './run.js';
import { readProgress, resetPlace, writeProgress, type StepMark, type TutorialPlace, type TutorialProgress } from './tutorial-progress.js';
import type { Scenario, Step, StepResult } from './types.js';

/** Where the walk reads keys and writes text: a terminal (tests give a pseudo-terminal). */
export interface TutorialTerminal {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** Colours and bold (an ANSI terminal). */
  colour: boolean;
}

export interface TutorialOptions {
  place: TutorialPlace;
  /** `--step N` (1-based) or `--resume`; neither starts at the first step with a fresh working directory. */
  start: { step: number } | 'resume' | 'first';
  /** The command line that continues this walk, for the resume hint. */
  resumeCommand: string;
}

/** How the walk ended: at the end of the document, or stopped at step `at` (0-based) and resumable there. */
export type TutorialEnd =
  { kind: 'done'; passed: number; skipped: number } | { kind: 'quit' | 'interrupted' | 'input-closed'; at: number; progressFile: string };

type Answer = { kind: 'line'; text: string } | { kind: 'sigint' } | { kind: 'closed' };

/** Asks one line with node:readline's line editor, `prefill` already typed; Ctrl-C and the end of input are answers too. */
function ask(terminal: TutorialTerminal, question: string, prefill = ''): Promise<Answer> {
  return new Promise((resolve) => {
    const rl = readline.createInterface({ input: terminal.input, output: terminal.output, terminal: true, historySize: 0 });
    let settled = false;
    const settle = (answer: Answer) => {
      if (settled) return;
      settled = true;
      rl.close();
      resolve(answer);
    };
    rl.on('SIGINT', () => settle({ kind: 'sigint' }));
    rl.on('close', () => settle({ kind: 'closed' }));
    rl.question(question, (text) => settle({ kind: 'line', text }));
    if (prefill) rl.write(prefill);
  });
}

const style = (terminal: TutorialTerminal, code: string, text: string) => (terminal.colour ? `\u001b[${code}m${text}\u001b[0m` : text);

/** The document's prose before step `index`: after the front matter or the previous step and its expect/output blocks. */
function proseBefore(scenario: Scenario, index: number): string {
  const frontEnd = scenario.lines.findIndex((l, i) => i > 0 && l.trim() === '---') + 1;
  const previous = scenario.steps[index - 1];
  const from = previous ? Math.max(previous.endLine, ...previous.expectations.map((e) => e.endLine)) : frontEnd;
  const to = scenario.steps[index]!.line - 1; // 1-based line of the fence, so `to` lines end before it
  const hidden = new Set<number>();
  for (const fence of scanFences(scenario.lines.slice(0, to), from)) {
    if (!/^(expect|output)\b/.test(fence.info)) continue;
    for (let l = fence.line; l <= (fence.endLine ?? to); l++) hidden.add(l);
  }
  const lines = scenario.lines.slice(from, to).filter((_, i) => !hidden.has(from + i + 1));
  return lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function showStep(terminal: TutorialTerminal, scenario: Scenario, index: number, withProse: boolean): void {
  const step = scenario.steps[index]!;
  const out = terminal.output;
  if (withProse) {
    const prose = proseBefore(scenario, index);
    if (prose) out.write(`\n${prose.replace(/^(#{1,6} .*)$/gm, (h) => style(terminal, '1', h))}\n`);
  }
  const where = `step ${index + 1}/${scenario.steps.length} · ${scenario.name}.md:${step.line}${step.cleanup ? ' · cleanup' : ''}`;
  out.write(`\n${style(terminal, '2', `── ${where} ──`)}\n`);
  const prompt = step.language === 'sh' ? '$ ' : 'js> ';
  out.write(`${step.code.trimEnd().replace(/^/gm, (_m, offset: number) => (offset === 0 ? prompt : '  '))}\n`);
  for (const e of step.expectations) out.write(style(terminal, '2', `expect ${e.kind}${e.text ? `: ${e.text.split('\n').join(' ⏎ ')}` : ''}\n`));
}

/** A multi-line block in $VISUAL or $EDITOR (the line editor holds one line); null when there is none or it failed. */
async function editInEditor(code: string): Promise<string | null> {
  const editor = process.env.VISUAL || process.env.EDITOR;
  if (!editor) return null;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-tutorial-edit-'));
  const file = path.join(dir, 'block.sh');
  try {
    await fs.writeFile(file, code);
    const r = spawnSync('sh', ['-c', `${editor} "$1"`, 'editor', file], { stdio: 'inherit' });
    return r.status === 0 ? await fs.readFile(file, 'utf8') : null;
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

type Choice = { kind: 'run'; code: string } | { kind: 'skip' } | { kind: 'stop'; why: 'quit' | 'interrupted' | 'input-closed' } | { kind: 'again' };

/** The reader's choice for a step: run it (as written or edited), skip it, stop. */
async function choose(terminal: TutorialTerminal, step: Step, failedBefore: boolean): Promise<Choice> {
  const keys = `${failedBefore ? '[Enter] run again' : '[Enter] run'} · e edit · s skip · q quit`;
  const answer = await ask(terminal, `${style(terminal, '36', keys)} > `);
  if (answer.kind === 'sigint') return { kind: 'stop', why: 'interrupted' };
  if (answer.kind === 'closed') return { kind: 'stop', why: 'input-closed' };
  const key = answer.text.trim().toLowerCase();
  if (key === '') return { kind: 'run', code: step.code };
  if (key === 's') return { kind: 'skip' };
  if (key === 'q') return { kind: 'stop', why: 'quit' };
  if (key !== 'e') {
    terminal.output.write(`'${answer.text.trim()}': press Enter to run the command, e to edit it first, s to skip it, q to stop here\n`);
    return { kind: 'again' };
  }
  const code = step.code.trimEnd();
  if (code.includes('\n')) {
    const edited = await editInEditor(code);
    if (edited === null) terminal.output.write('this block has several lines: set $EDITOR (or $VISUAL) to edit it, or run it as written\n');
    return edited === null ? { kind: 'again' } : { kind: 'run', code: edited };
  }
  const edited = await ask(terminal, step.language === 'sh' ? 'edit $ ' : 'edit js> ', code);
  if (edited.kind === 'sigint') return { kind: 'again' };
  if (edited.kind === 'closed') return { kind: 'stop', why: 'input-closed' };
  return { kind: 'run', code: edited.text };
}

/** Runs the step's (possibly edited) code with its output live on the terminal; Ctrl-C stops the command (its process group). */
async function runLive(
  terminal: TutorialTerminal,
  scenario: Scenario,
  environment: ScenarioEnvironment,
  place: TutorialPlace,
  step: Step,
): Promise<{ result: StepResult; interrupted: boolean }> {
  const controller = new AbortController();
  const onInt = () => controller.abort();
  process.on('SIGINT', onInt);
  let lastChar = '\n';
  try {
    const result = await executeStep(scenario, environment, place.workDir, step, {
      signal: controller.signal,
      onOutput: (chunk) => {
        terminal.output.write(chunk);
        lastChar = chunk.slice(-1) || lastChar;
      },
    });
    if (lastChar !== '\n') terminal.output.write('\n');
    return { result, interrupted: controller.signal.aborted };
  } finally {
    process.off('SIGINT', onInt);
  }
}

function reportResult(terminal: TutorialTerminal, result: StepResult): void {
  const seconds = `${(result.durationMs / 1000).toFixed(1)} s`;
  if (result.status === 'passed') {
    terminal.output.write(`${style(terminal, '32', '✔')} as expected (${seconds})\n`);
  } else {
    terminal.output.write(`${style(terminal, '31', '✘')} ${(result.failure ?? 'failed').split('\n').join('\n  ')} (${seconds})\n`);
  }
}

/** Where the walk begins: the saved place (--resume), a given step, or the first step in a fresh working directory. */
async function startingProgress(scenario: Scenario, lab: string, options: TutorialOptions, terminal: TutorialTerminal): Promise<TutorialProgress> {
  const saved = await readProgress(options.place, scenario);
  const fresh = (): TutorialProgress => ({ document: scenario.name, lab, next: 0, marks: scenario.steps.map(() => null), updatedAt: '' });
  if (options.start === 'resume') {
    if (saved && saved.next < scenario.steps.length) return saved;
    terminal.output.write(`${saved ? 'the last walk through this document ended' : 'no saved place in this document'}: starting at step 1\n`);
  } else if (options.start !== 'first') {
    const progress = saved ?? fresh();
    if (!saved) await fs.mkdir(options.place.workDir, { recursive: true });
    return { ...progress, next: options.start.step - 1 };
  } else if (saved && saved.next > 0 && saved.next < scenario.steps.length) {
    terminal.output.write(`(you stopped at step ${saved.next + 1} last time; this starts again: --resume continues there)\n`);
  }
  await resetPlace(options.place);
  return fresh();
}

/**
 * Walks a document in the terminal: each step's prose, its command, run on Enter (or edited
 * first), its real output, its expectations checked (✔/✘). The place is saved before every step,
 * so `--resume` continues in a new process; Ctrl-C, q and a closed terminal leave the lab as it
 * is (no cleanup block runs) and say how to continue.
 */
export async function runTutorial(
  scenario: Scenario,
  environment: ScenarioEnvironment,
  terminal: TutorialTerminal,
  options: TutorialOptions,
): Promise<TutorialEnd> {
  const progress = await startingProgress(scenario, environment.labName, options, terminal);
  const onHangUp = () => void hungUp(options, environment);
  process.on('SIGHUP', onHangUp);
  try {
    return await walk(scenario, environment, terminal, options, progress);
  } finally {
    process.off('SIGHUP', onHangUp);
  }
}

/**
 * The terminal hung up: the place was saved before the step began (a running command is
 * killed with its process group); the line goes to stderr, which may outlive the terminal.
 * The environment's temporary files go before the process does (the caller's finally never runs).
 */
async function hungUp(options: TutorialOptions, environment: ScenarioEnvironment): Promise<never> {
  killActiveBlocks();
  // First: writing to a terminal that is gone may end the process (EIO) before anything after it runs.
  const disposed = environment.dispose?.().catch(() => undefined);
  try {
    process.stderr.write(`the terminal closed: your place is kept in ${options.place.progressFile}; continue with: ${options.resumeCommand}\n`);
  } catch {
    /* nowhere to say it */
  }
  await disposed;
  process.exit(ExitCode.inputClosed);
}

async function walk(
  scenario: Scenario,
  environment: ScenarioEnvironment,
  terminal: TutorialTerminal,
  options: TutorialOptions,
  progress: TutorialProgress,
): Promise<TutorialEnd> {
  terminal.output.write(`${style(terminal, '1', scenario.title)}\n${scenario.summary}\n`);
  let index = progress.next;
  let shown = -1;
  const save = async (next: number) => {
    progress.next = next;
    progress.updatedAt = new Date().toISOString();
    await writeProgress(options.place, progress);
  };
  while (index < scenario.steps.length) {
    await save(index);
    const step = scenario.steps[index]!;
    if (shown !== index) showStep(terminal, scenario, index, true);
    shown = index;
    const choice = await choose(terminal, step, progress.marks[index] === 'failed');
    if (choice.kind === 'again') continue;
    if (choice.kind === 'stop') return stopped(terminal, options, choice.why, index);
    if (choice.kind === 'skip') {
      progress.marks[index] = 'skipped';
      index++;
      continue;
    }
    const { result, interrupted } = await runLive(terminal, scenario, environment, options.place, { ...step, code: choice.code });
    if (interrupted) return stopped(terminal, options, 'interrupted', index);
    reportResult(terminal, result);
    progress.marks[index] = result.status === 'passed' ? 'passed' : 'failed';
    if (result.status === 'passed') index++;
  }
  await save(index);
  return finished(terminal, progress.marks);
}

function stopped(terminal: TutorialTerminal, options: TutorialOptions, why: 'quit' | 'interrupted' | 'input-closed', at: number): TutorialEnd {
  const what = { quit: 'stopped', interrupted: 'interrupted', 'input-closed': 'the terminal closed (its input ended)' }[why];
  const line =
    `\n${what} at step ${at + 1}: the lab is left as it is (no cleanup block ran); your place is kept in ${options.place.progressFile}\n` +
    `continue with: ${options.resumeCommand}\n`;
  // A hung-up terminal may refuse the write: the exit code says it all the same.
  try {
    terminal.output.write(line);
  } catch {
    /* the terminal is gone */
  }
  return { kind: why, at, progressFile: options.place.progressFile };
}

/** The end of the document: a failed step was run again or skipped before the walk went on, so every step passed or was skipped. */
function finished(terminal: TutorialTerminal, marks: (StepMark | null)[]): TutorialEnd {
  const count = (m: StepMark) => marks.filter((x) => x === m).length;
  const end = { kind: 'done' as const, passed: count('passed'), skipped: count('skipped') };
  terminal.output.write(`\nthe end: ${end.passed} passed, ${end.skipped} skipped of ${marks.length} steps\n`);
  return end;
}
