import { spawn } from 'node:child_process';
import path from 'node:path';

const PROMPT = 'kubectl> ';

interface PromptAnswer {
  /** From the line sent to the next prompt: one kubectl run through the session. */
  ms: number;
  stdout: string;
  stderr: string;
}

export interface PromptSession {
  pid: number;
  /** Resolves with the ms from spawn to the first prompt (session open: hub reads, tunnel client, listener, kubeconfig). */
  opened: Promise<number>;
  run: (line: string) => Promise<PromptAnswer>;
  /** Types `exit`; resolves with the exit code and what came on stderr since the last prompt. */
  exit: () => Promise<{ exitCode: number | null; stderr: string }>;
  kill: () => void;
}

/**
 * The built CLI (dist/) with `args` that end in a `kubectl>` prompt (`proxy kubectl -i`), driven
 * through its stdin one line at a time, as a user at a terminal would.
 */
export function startPromptSession(args: string[], env: NodeJS.ProcessEnv): PromptSession {
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [path.resolve('dist/cli/main.js'), ...args], {
    env: { ...process.env, CI: 'true', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let closed: number | null | undefined;
  let waiting: { resolve: (a: { stdout: string; stderr: string }) => void; reject: (e: Error) => void } | undefined;
  const gone = () =>
    new Error(`pid ${child.pid}: exited (${closed}) before its prompt; stdout ${JSON.stringify(out.slice(-600))}, stderr ${JSON.stringify(err.slice(-600))}`);
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      closed = code;
      waiting?.reject(gone());
      waiting = undefined;
      resolve(code);
    }),
  );
  child.stdin.on('error', () => undefined);
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString('utf8');
    if (waiting && out.endsWith(PROMPT)) {
      const w = waiting;
      waiting = undefined;
      const answer = { stdout: out.slice(0, -PROMPT.length), stderr: err };
      out = '';
      err = '';
      w.resolve(answer);
    }
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const nextPrompt = () =>
    new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      if (closed !== undefined) reject(gone());
      else waiting = { resolve, reject };
    });
  const msSince = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;

  const opened = nextPrompt().then(() => msSince(started));
  return {
    pid: child.pid ?? -1,
    opened,
    run: async (line) => {
      const t = process.hrtime.bigint();
      const answer = nextPrompt();
      child.stdin.write(`${line}\n`);
      const { stdout, stderr } = await answer;
      return { ms: msSince(t), stdout, stderr };
    },
    exit: async () => {
      child.stdin.end('exit\n');
      const exitCode = await exited;
      return { exitCode, stderr: err };
    },
    kill: () => {
      if (closed === undefined) child.kill('SIGKILL');
    },
  };
}
