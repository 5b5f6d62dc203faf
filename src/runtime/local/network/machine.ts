import fs from 'node:fs/promises';
import { run } from '../../../util/exec.js';

/** Thin readers of the machine's network state, shared by apply, health and the leftover sweep. */

export async function succeeds(file: string, args: string[]): Promise<boolean> {
  return (await run(file, args, { allowFailure: true })).exitCode === 0;
}

export async function listNetns(): Promise<string[]> {
  const out = (await run('ip', ['-j', 'netns', 'list'])).stdout.trim();
  return out ? (JSON.parse(out) as { name: string }[]).map((n) => n.name) : [];
}

export interface LinkInfo {
  ifname: string;
  operstate?: string;
  flags?: string[];
  addr_info?: { family?: string; local?: string; prefixlen?: number }[];
}

/** A link and its addresses, in the host (netns undefined) or in a namespace; null when it does not exist. */
export async function readLink(name: string, netns?: string): Promise<LinkInfo | null> {
  const args = [...(netns ? ['-n', netns] : []), '-j', 'addr', 'show', 'dev', name];
  const r = await run('ip', args, { allowFailure: true });
  if (r.exitCode !== 0) return null;
  return (JSON.parse(r.stdout || '[]') as LinkInfo[])[0] ?? null;
}

export async function listLinks(): Promise<string[]> {
  return (JSON.parse((await run('ip', ['-j', 'link', 'show'])).stdout || '[]') as { ifname?: string }[]).flatMap((l) => (l.ifname ? [l.ifname] : []));
}

/** `iptables -S` of a whole table. */
export async function iptablesListing(table: string): Promise<string> {
  return (await run('iptables', ['-t', table, '-S'])).stdout;
}

export async function iptablesRestore(script: string): Promise<void> {
  await run('iptables-restore', ['--noflush'], { input: script });
}

/** A sysctl of the host's network namespace, read from /proc (no process needed). */
export async function readSysctl(key: string): Promise<string> {
  return (await fs.readFile(`/proc/sys/${key.replace(/\./g, '/')}`, 'utf8')).trim();
}
