import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { signalGroup } from '../util/process-group.js';

export interface BlockRequest {
  language: 'sh' | 'js';
  code: string;
  timeoutSeconds: number;
  env: NodeJS.ProcessEnv;
  /** Working directory shared by the blocks of one document. */
  cwd: string;
  /** Shell file of exported variables, read before and written after every block. */
  stateFile: string;
  /** Where the block is written: js stack traces are rewritten to point at the document's lines. */
  source: { file: string; line: number };
  signal?: AbortSignal;
  onOutput?: (chunk: string) => void;
}

export interface BlockOutcome {
  /** Null when the block did not exit by itself. */
  exitCode: number | null;
  output: string;
  timedOut: boolean;
  interrupted: boolean;
  durationMs: number;
}

/** Output kept per block; beyond it the beginning is dropped (the end explains failures). */
const MAX_OUTPUT = 1 << 20;
/** Between SIGTERM and SIGKILL of a block's process group. */
const KILL_GRACE_MS = 3000;
/** How long to wait for the output pipes after the group is gone (a process that left the group may hold them). */
const PIPE_GRACE_MS = 2000;

/** Process groups of blocks now running, so an interrupted runner can end them all. */
const activeGroups = new Set<number>();

/** Kills every running block's process group at once (for a second Ctrl-C, when waiting is no longer wanted). */
export function killActiveBlocks(): void {
  for (const pgid of activeGroups) signalGroup(pgid, 'SIGKILL');
}

/** Sources the exported variables of earlier blocks; on exit saves them (minus read-only ones, which cannot be re-declared). */
function shellProgram(code: string, stateFile: string): string {
  const q = shellQuote(stateFile);
  return [`if [ -f ${q} ]; then . ${q}; fi`, `trap '{ export -p | grep -Ev "^declare -[a-zA-Z]*r" || true; } > ${q}' EXIT`, code].join('\n');
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The package's compiled library, whether this module runs from dist/ or (under vitest) from src/. */
const BUILT_LIBRARY = new URL('../../dist/', import.meta.url);

/**
 * A js block as an ES module: the document's code first, so its line numbers
 * are the file's; helpers are hoisted function declarations and the imports
 * (hoisted too) come last.
 */
function jsProgram(code: string, stateFile: string): string {
  return `${code}
function waitFor(check, { timeout = 60000, interval = 500, what = 'condition' } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  return (async () => {
    for (;;) {
      try {
        last = await check();
        if (last) return last;
      } catch (err) {
        last = err;
      }
      if (Date.now() >= deadline) {
        const shown = last instanceof Error ? last.message : JSON.stringify(last);
        throw new Error(\`waitFor: \${what} not met within \${timeout} ms (last result: \${shown})\`);
      }
      await new Promise((resolve) => setTimeout(resolve, interval));
    }
  })();
}
function ocmLab(module) {
  return import(new URL(module, ${JSON.stringify(BUILT_LIBRARY.href)}).href);
}
function exportVar(name, value) {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(\`exportVar: '\${name}' is not a shell variable name\`);
  process.env[name] = String(value);
  __appendFileSync(${JSON.stringify(stateFile)}, \`export \${name}='\${String(value).replace(/'/g, "'\\\\''")}'\\n\`);
}
import { $, fs, path, YAML } from ${JSON.stringify(import.meta.resolve('zx'))};
import assert from 'node:assert/strict';
import { appendFileSync as __appendFileSync } from 'node:fs';
`;
}

/** `…/.block-12.mjs:3:7` in a stack trace becomes `doc.md:15:7`: the block's code starts on the line after its fence. */
function toDocumentLines(output: string, programFile: string, source: { file: string; line: number }, codeLines: number): string {
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const names = [pathToFileURL(programFile).href, programFile].map(escape).join('|');
  return output.replace(new RegExp(`(?:${names}):(\\d+)`, 'g'), (_m, n: string) =>
    Number(n) <= codeLines ? `${source.file}:${source.line + Number(n)}` : `(ocm-lab js helpers):${Number(n) - codeLines}`,
  );
}

/** Runs one block in its own process group with a deadline; nothing it started outlives it. */
export async function executeBlock(req: BlockRequest): Promise<BlockOutcome> {
  const started = Date.now();
  let file: string;
  let args: string[];
  let programFile: string | null = null;
  if (req.language === 'sh') {
    [file, args] = ['bash', ['-euo', 'pipefail', '-c', shellProgram(req.code, req.stateFile)]];
  } else {
    programFile = path.join(req.cwd, `.block-${req.source.line}.mjs`);
    await fs.writeFile(programFile, jsProgram(req.code, req.stateFile));
    // Through bash so that variables exported by earlier blocks are in process.env.
    [file, args] = ['bash', ['-c', 'if [ -f "$1" ]; then . "$1"; fi; exec "$2" "$3"', 'bash', req.stateFile, process.execPath, programFile]];
  }
  const outcome = await new Promise<Omit<BlockOutcome, 'durationMs'>>((resolve) => {
    const child = spawn(file, args, { env: req.env, cwd: req.cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const pgid = child.pid;
    let output = '';
    let dropped = 0;
    const collect = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      req.onOutput?.(text);
      output += text;
      if (output.length > MAX_OUTPUT) {
        dropped += output.length - MAX_OUTPUT;
        output = output.slice(output.length - MAX_OUTPUT);
      }
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);

    let timedOut = false;
    let interrupted = false;
    let exitCode: number | null = null;
    let killTimer: NodeJS.Timeout | undefined;
    let pipeTimer: NodeJS.Timeout | undefined;
    const endGroup = () => {
      if (pgid === undefined || killTimer) return;
      if (!signalGroup(pgid, 'SIGTERM')) return;
      killTimer = setTimeout(() => signalGroup(pgid, 'SIGKILL'), KILL_GRACE_MS);
    };
    const deadline = setTimeout(() => {
      timedOut = true;
      endGroup();
    }, req.timeoutSeconds * 1000);
    const onAbort = () => {
      interrupted = true;
      endGroup();
    };
    req.signal?.addEventListener('abort', onAbort, { once: true });
    if (req.signal?.aborted) onAbort();
    if (pgid !== undefined) activeGroups.add(pgid);

    let settled = false;
    const finish = (code: number | null, note?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearTimeout(killTimer);
      clearTimeout(pipeTimer);
      req.signal?.removeEventListener('abort', onAbort);
      if (pgid !== undefined) {
        signalGroup(pgid, 'SIGKILL'); // whatever is left of the group (background jobs of the block)
        activeGroups.delete(pgid);
      }
      const prefix = dropped ? `[… ${dropped} bytes of earlier output omitted …]\n` : '';
      resolve({ exitCode: code, output: prefix + output + (note ?? ''), timedOut, interrupted });
    };
    child.on('error', (err) => finish(null, `could not start ${file}: ${err.message}\n`));
    child.on('exit', (code) => {
      exitCode = timedOut || interrupted ? null : code;
      // Background processes of the block still in its group end with it.
      if (pgid !== undefined && signalGroup(pgid, 0)) {
        signalGroup(pgid, 'SIGTERM');
        killTimer = setTimeout(() => signalGroup(pgid, 'SIGKILL'), KILL_GRACE_MS);
      }
      pipeTimer = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        finish(exitCode);
      }, KILL_GRACE_MS + PIPE_GRACE_MS);
    });
    child.on('close', () => finish(exitCode));
  });
  if (programFile) {
    await fs.rm(programFile, { force: true });
    outcome.output = toDocumentLines(outcome.output, programFile, req.source, req.code.split('\n').length);
  }
  return { ...outcome, durationMs: Date.now() - started };
}
