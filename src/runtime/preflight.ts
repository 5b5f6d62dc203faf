import { MissingPrerequisiteError } from '../errors.js';

/**
 * What `up` checks of the machine before it creates anything, as verdicts every runtime gives the same way:
 * `stop` (the lab cannot start: exit 3 naming what is missing and what to do), `warning` (it starts, but one
 * line says what to change) or `ok`. The runtimes work them out from facts (host/facts.ts) with pure functions;
 * `up` acts on them, `up --dry-run` shows them.
 */
type PreflightLevel = 'ok' | 'warning' | 'stop';

export interface PreflightCheck {
  /** What was checked: `fs.inotify.max_user_instances`, `memory`, `platform`, `engine`, `node image` … */
  check: string;
  level: PreflightLevel;
  /** What was found, and for a warning or a stop what it means, in one sentence. */
  line: string;
  /** A warning's or a stop's remedy: the command to run where there is one. */
  fix?: string;
  /** The sysctl setting the remedy makes (the warnings' settings are put in one `sysctl -w` line). */
  sysctl?: { key: string; value: number };
}

/** One inotify limit and what a lab needs of it. */
export interface InotifyLimitInput {
  key: 'fs.inotify.max_user_instances' | 'fs.inotify.max_user_watches';
  /** The limit now; null where it cannot be read (not Linux, or not this kernel's). */
  limit: number | null;
  /** Held now by the user the lab's processes run as (the lab's running clusters included); null when not read. */
  inUse: number | null;
  /** What each cluster this `up` adds takes, measured (docs/platforms.md, "Preflight"). */
  perCluster: number;
  newClusters: number;
  /** Headroom for what else starts meanwhile (a shell, an editor, the lab's pods). */
  spare: number;
  /** Below this (kind's advice for many clusters on one machine) and above the need: a warning; null: none. */
  recommended: number | null;
  /** Who takes it, for the sentences, in the singular: `kind node`, `cluster`. */
  what: string;
}

/** The value a remedy sets: kind's advice, or twice the need when the lab needs more than that. */
export function raisedLimit(needed: number, recommended: number | null): number {
  return Math.max(recommended ?? 0, 2 * needed);
}

/** What the lab needs of one inotify limit: what is held now, plus each new cluster's share, plus headroom. */
export function inotifyNeed(input: Pick<InotifyLimitInput, 'inUse' | 'perCluster' | 'newClusters' | 'spare'>): number {
  return (input.inUse ?? 0) + input.newClusters * input.perCluster + input.spare;
}

/**
 * The verdict on one inotify limit: `stop` below what the lab needs (the clusters would fail to start, "too many
 * open files"), `warning` between the need and `recommended`, else `ok`. Pure.
 */
export function inotifyCheck(input: InotifyLimitInput): PreflightCheck {
  const { key, limit } = input;
  if (limit === null) return { check: key, level: 'ok', line: `${key}: not read on this machine (the nodes' kernel is not this one's, or not Linux)` };
  if (input.newClusters === 0) return { check: key, level: 'ok', line: `${key} is ${limit}; no cluster to start` };
  const needed = inotifyNeed(input);
  const parts = `${input.inUse !== null ? `${input.inUse} in use, ` : ''}${input.perCluster} per new cluster × ${input.newClusters}, ${input.spare} spare`;
  if (limit < needed) {
    const value = raisedLimit(needed, input.recommended);
    return {
      check: key,
      level: 'stop',
      line:
        `${key} is ${limit}; the lab's ${input.newClusters} new ${input.what}${input.newClusters === 1 ? ' needs' : 's need'} at least ${needed} ` +
        `(${parts})`,
      fix: `sudo sysctl -w ${key}=${value}`,
      sysctl: { key, value },
    };
  }
  if (input.recommended !== null && limit < input.recommended) {
    return {
      check: key,
      level: 'warning',
      line: `${key} is ${limit}: enough for this lab (${needed} needed), below the ${input.recommended} kind advises for more clusters or pods`,
      fix: `sudo sysctl -w ${key}=${input.recommended}`,
      sysctl: { key, value: input.recommended },
    };
  }
  return { check: key, level: 'ok', line: `${key} is ${limit}; the lab needs ${needed} (${parts})` };
}

/** The warnings as the one line `up` prints (their sysctl settings in one `sysctl -w`); null when there are none. */
export function warningLine(checks: readonly PreflightCheck[]): string | null {
  const warnings = checks.filter((c) => c.level === 'warning');
  if (!warnings.length) return null;
  const settings = warnings.flatMap((w) => (w.sysctl ? [`${w.sysctl.key}=${w.sysctl.value}`] : []));
  const other = warnings.filter((w) => !w.sysctl && w.fix).map((w) => w.fix!);
  const fixes = [...(settings.length ? [`sudo sysctl -w ${settings.join(' ')}`] : []), ...other];
  return `warning: ${warnings.map((w) => w.line).join('; ')}${fixes.length ? `: ${fixes.join('; ')}` : ''}`;
}

/**
 * Throws exit 3 naming every stop at once (so one round of fixes is enough), before anything of the lab exists;
 * else returns the warning line (null without warnings).
 */
export function requirePreflight(checks: readonly PreflightCheck[], what: string): string | null {
  const stops = checks.filter((c) => c.level === 'stop');
  if (stops.length) {
    const fixes = stops.flatMap((s) => (s.fix ? [s.fix] : []));
    const persist = stops.some((s) => s.sysctl) ? ['(to keep sysctl settings across reboots, put them in /etc/sysctl.d/99-ocm-lab.conf)'] : [];
    throw new MissingPrerequisiteError(`this machine cannot run ${what}: ${stops.map((s) => s.line).join('; ')}`, {
      hint: [...fixes, ...persist].join('\n'),
    });
  }
  return warningLine(checks);
}

/** `up --dry-run`'s text of the checks: one line each, with its verdict and remedy. */
export function renderPreflight(checks: readonly PreflightCheck[]): string {
  if (!checks.length) return 'Preflight: nothing to check on this runtime';
  return [
    'Preflight (what up checks before it creates anything; stop = exit 3):',
    ...checks.map((c) => `  ${c.level.padEnd(7)}  ${c.line}${c.level !== 'ok' && c.fix ? `: ${c.fix}` : ''}`),
  ].join('\n');
}
