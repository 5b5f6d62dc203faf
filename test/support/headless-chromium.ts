import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** A page of a real headless Chromium, driven over the DevTools protocol (Node's own WebSocket; no library). */
export interface HeadlessPage {
  /** The value of a JavaScript expression in the page (awaited when it is a promise). */
  evaluate<T>(expression: string): Promise<T>;
  /** A PNG of the window (its viewport) as it is drawn now. */
  screenshot(): Promise<Buffer>;
  /** Ends Chromium and removes its profile directory. */
  close(): Promise<void>;
}

const CHROMIUM = process.env.OCM_LAB_CHROMIUM ?? '/usr/bin/chromium';

/** The `ws://` address Chromium prints on stderr once its DevTools endpoint listens. */
function devtoolsAddress(child: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`${CHROMIUM} printed no DevTools address within ${timeoutMs} ms: ${err.slice(-600)}`)), timeoutMs);
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString('utf8');
      const found = /DevTools listening on (ws:\/\/\S+)/.exec(err);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]!);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${CHROMIUM} exited (${code ?? signal}) before it listened: ${err.slice(-600)}`));
    });
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(
        new Error(
          `could not run ${CHROMIUM} (npm test installs Debian's chromium: OCM_LAB_TESTS=1 scripts/bootstrap.sh; $OCM_LAB_CHROMIUM names another): ${e.message}`,
        ),
      );
    });
  });
}

/** Opens `url` in a new headless Chromium of `width`×`height` pixels. */
export async function openHeadlessPage(url: string, o: { width?: number; height?: number } = {}): Promise<HeadlessPage> {
  const profile = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-chromium-'));
  const child = spawn(
    CHROMIUM,
    [
      '--headless=new',
      // Root (the e2e tests run as root) cannot use Chromium's sandbox.
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-extensions',
      '--disable-background-networking',
      '--disable-component-update',
      '--remote-debugging-address=127.0.0.1',
      '--remote-debugging-port=0',
      `--user-data-dir=${profile}`,
      `--window-size=${o.width ?? 1280},${o.height ?? 900}`,
      'about:blank',
    ],
    // Its temporary files in the profile directory too, so that closing removes them.
    { stdio: ['ignore', 'ignore', 'pipe'], detached: true, env: { ...process.env, TMPDIR: profile } },
  );
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Gone already.
      }
      await exited;
    }
    await fs.rm(profile, { recursive: true, force: true });
  };
  try {
    const browserWs = await devtoolsAddress(child, 30_000);
    const { port } = new URL(browserWs);
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { type: string; webSocketDebuggerUrl: string }[];
    const page = targets.find((t) => t.type === 'page');
    if (!page) throw new Error(`Chromium at 127.0.0.1:${port} has no page target: ${JSON.stringify(targets)}`);
    const ws = new WebSocket(page.webSocketDebuggerUrl);
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve(), { once: true });
      ws.addEventListener('error', () => reject(new Error(`could not connect to ${page.webSocketDebuggerUrl}`)), { once: true });
    });
    let nextId = 0;
    const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
    ws.addEventListener('message', (ev: MessageEvent) => {
      const msg = JSON.parse(String(ev.data)) as { id?: number; result?: unknown; error?: { message: string } };
      const waiter = msg.id === undefined ? undefined : pending.get(msg.id);
      if (!waiter) return;
      pending.delete(msg.id!);
      if (msg.error) waiter.reject(new Error(msg.error.message));
      else waiter.resolve(msg.result);
    });
    const send = <T>(method: string, params: Record<string, unknown> = {}): Promise<T> =>
      new Promise<T>((resolve, reject) => {
        const id = ++nextId;
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        ws.send(JSON.stringify({ id, method, params }));
      });
    await send('Page.enable');
    await send('Page.navigate', { url });
    return {
      evaluate: async <T>(expression: string) => {
        const r = await send<{ result: { value?: T }; exceptionDetails?: { text: string } }>('Runtime.evaluate', {
          expression,
          awaitPromise: true,
          returnByValue: true,
        });
        if (r.exceptionDetails) throw new Error(`${expression}: ${r.exceptionDetails.text}`);
        return r.result.value as T;
      },
      screenshot: async () =>
        Buffer.from((await send<{ data: string }>('Page.captureScreenshot', { format: 'png', captureBeyondViewport: false })).data, 'base64'),
      close: async () => {
        ws.close();
        await close();
      },
    };
  } catch (err) {
    await close();
    throw err;
  }
}
