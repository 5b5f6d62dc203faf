import { existsSync } from 'node:fs';
import module from 'node:module';
import path from 'node:path';
import { cacheDir } from '../paths.js';

/**
 * What the CLI asks of the Node.js it runs on, checked first thing at its entry (main.ts). Like
 * paths.ts, this module loads nothing but Node's own modules: it runs on every command.
 */

/** The Node.js LTS lines ocm-lab supports and tests on (package.json `engines`, README, CI). */
const SUPPORTED_NODE_LINES = [22, 24, 26] as const;
/** The oldest supported: yargs 18 asks for 22.12 on the 22 line (package.json `engines`). */
const OLDEST_SUPPORTED = [22, 12] as const;
/** The oldest Node.js the CLI still starts on: yargs 18 needs 20.19. */
const OLDEST_STARTING = [20, 19] as const;
const INSTALL_HINT = 'install Node.js 24 or 26 (LTS): https://nodejs.org/en/download, or `nvm install --lts`';

export type NodeVerdict =
  | { kind: 'supported' }
  /** Starts and works, but is not tested (Node 20 is past its end of life): one line of warning where it matters. */
  | { kind: 'unsupported'; message: string }
  /** Would fail inside a dependency with a stack trace: refused before anything else loads. */
  | { kind: 'too-old'; message: string; hint: string };

/** The verdict on a Node.js version as `process.versions.node` spells it ("20.20.2"). */
export function nodeVerdict(version: string): NodeVerdict {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const below = ([m, n]: readonly [number, number]) => major < m || (major === m && minor < n);
  const lines = SUPPORTED_NODE_LINES.join(', ');
  if (below(OLDEST_STARTING)) return { kind: 'too-old', message: `ocm-lab needs Node.js ${lines} (LTS); this is Node.js v${version}`, hint: INSTALL_HINT };
  if (below(OLDEST_SUPPORTED)) {
    const what = major === 20 ? 'past its end of life (2026-04-30)' : `older than ${OLDEST_SUPPORTED.join('.')}`;
    return { kind: 'unsupported', message: `Node.js v${version} is ${what}; ocm-lab runs on it but is tested on Node.js ${lines} only: ${INSTALL_HINT}` };
  }
  return { kind: 'supported' };
}

/**
 * Node's on-disk cache of compiled modules (Node ≥ 22.1; nothing on 20) in the lab's cache
 * directory: a later run of any command skips compiling the modules it loads
 * (docs/measured/startup.md). Node keys entries by its own version and each file's content, so a
 * rebuilt dist/ or another Node never reads a stale entry, and NODE_DISABLE_COMPILE_CACHE=1 turns
 * it off. Only in a cache directory that is there already (`up` and `setup` make it): a command that
 * stops at bad input leaves nothing behind. A cache that cannot be written only costs the saving.
 */
export function enableCompileCache(env: NodeJS.ProcessEnv = process.env): void {
  // @types/node 20 does not declare it.
  const enable = (module as { enableCompileCache?: (dir?: string) => unknown }).enableCompileCache;
  const dir = cacheDir(env);
  if (!enable || !existsSync(dir)) return;
  try {
    enable(path.join(dir, 'node-compile-cache'));
  } catch {
    // Only a saving: the command runs the same without it.
  }
}
