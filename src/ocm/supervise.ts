import fs from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { NotReadyError } from '../errors.js';
import { logTail, processState, startProcess, stopProcess, type ProcessSpec } from '../runtime/local/process.js';

/** One GET; true when it answered 200. Health endpoints only: certificates are not checked here. */
export function answers200(url: string, timeoutMs = 1_500): Promise<boolean> {
  return new Promise((resolve) => {
    const get = url.startsWith('https:') ? https.get : http.get;
    const req = get(url, { timeout: timeoutMs, rejectUnauthorized: false, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(false));
  });
}

async function componentFailure(spec: ProcessSpec, why: string): Promise<NotReadyError> {
  return new NotReadyError(`${spec.name} ${why}\n--- ${spec.logFile} (last lines) ---\n${await logTail(spec.logFile)}`, {
    hint: `see the whole log in ${spec.logFile}; 'ocm-lab down' removes the lab`,
  });
}

/**
 * Keeps one component running: a live process is left alone (a second `up`
 * restarts nothing); a missing or dead one is started and awaited until
 * `ready` says yes, it exits, or time runs out — each with its log tail.
 */
export async function ensureProcess(
  spec: ProcessSpec,
  ready: () => Promise<boolean>,
  options: { timeoutMs: number; progress?: (line: string) => void },
): Promise<'running' | 'started'> {
  const state = await processState(spec);
  if (state.running) return 'running';
  await fs.mkdir(String(spec.env?.TMPDIR ?? '/tmp'), { recursive: true, mode: 0o700 });
  options.progress?.(`starting ${spec.name}`);
  const proc = await startProcess(spec);
  let exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  void proc.exited.then((status) => {
    exited = status;
  });
  try {
    const deadline = Date.now() + options.timeoutMs;
    for (;;) {
      if (exited) {
        const { code, signal } = exited;
        throw await componentFailure(spec, `exited with ${signal ? `signal ${signal}` : `status ${String(code)}`} while starting`);
      }
      if (await ready()) break;
      if (Date.now() > deadline) {
        const failure = await componentFailure(spec, `did not become ready within ${Math.round(options.timeoutMs / 1000)} s`);
        // A half-started component would make the next `up` believe it is fine.
        await stopProcess(spec, 5_000);
        throw failure;
      }
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  } finally {
    proc.release();
  }
  options.progress?.(`${spec.name} ready (pid ${proc.pid})`);
  return 'started';
}
