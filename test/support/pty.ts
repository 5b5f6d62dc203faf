import { spawn } from 'node:child_process';

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

export interface PtySession {
  /** Everything the terminal showed so far, colour codes and carriage returns removed. */
  screen: () => string;
  /** Resolves once the screen, after what it showed when `mark()` was last called, contains `text`; rejects after `timeoutMs`. */
  waitFor: (text: string | RegExp, timeoutMs?: number) => Promise<void>;
  /** From now on waitFor looks only at what comes next. */
  mark: () => void;
  /** Bytes as typed on the keyboard ('\r' is Enter, '\x03' Ctrl-C, '\x15' Ctrl-U, '\x04' Ctrl-D). */
  type: (keys: string) => void;
  /** The exit status of the command in the terminal (script -e passes it on; 128 + n for a signal). */
  exited: Promise<number | null>;
  /** Closes the terminal: kills `script`, so the command's terminal hangs up (SIGHUP to its session). */
  hangUp: () => void;
}

/**
 * `shellCommand` in a pseudo-terminal of its own, made by util-linux `script`: the command's
 * stdin and stdout are a terminal (isTTY, raw mode, Ctrl-C as SIGINT from the line discipline),
 * and the test types into it and reads the screen through script's pipes.
 */
export function startPty(shellCommand: string, env: NodeJS.ProcessEnv): PtySession {
  const child = spawn('script', ['-qfec', shellCommand, '/dev/null'], {
    env: { ...process.env, TERM: 'xterm', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let from = 0;
  let waiters: (() => void)[] = [];
  const onData = (d: Buffer) => {
    out += d.toString('utf8').replace(ANSI, '').replace(/\r/g, '');
    for (const w of waiters) w();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  child.stdin.on('error', () => undefined);
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const waitFor = (text: string | RegExp, timeoutMs = 20_000) =>
    new Promise<void>((resolve, reject) => {
      const start = from;
      const seen = () => (typeof text === 'string' ? out.indexOf(text, start) >= 0 : text.test(out.slice(start)));
      const check = () => {
        if (!seen()) return;
        cleanup();
        resolve();
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`the terminal did not show ${String(text)} within ${timeoutMs} ms; it shows after the mark:\n${out.slice(start)}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        waiters = waiters.filter((w) => w !== check);
      };
      waiters.push(check);
      void exited.then(() => setTimeout(check, 0));
      check();
    });
  return {
    screen: () => out,
    waitFor,
    mark: () => {
      from = out.length;
    },
    type: (keys) => {
      child.stdin.write(keys);
    },
    exited,
    hangUp: () => {
      child.kill('SIGKILL');
    },
  };
}
