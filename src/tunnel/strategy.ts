import { splitHostPort } from './wire.js';
import type { AgentIdentifiers } from './identifiers.js';

/**
 * How the server picks an agent for a dial, tried in the configured order:
 * `destHost` — an agent whose host/ipv4/ipv6 identifier equals the address' host;
 * `defaultRoute` — an agent that announced default-route=true;
 * `default` — any agent.
 */
const STRATEGIES = ['destHost', 'defaultRoute', 'default'] as const;
export type Strategy = (typeof STRATEGIES)[number];

export class StrategyParseError extends Error {}

export function parseStrategies(text: string): Strategy[] {
  const list = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (list.length === 0)
    throw new StrategyParseError(`proxy strategies ${JSON.stringify(text)} are empty; use a comma-separated list of ${STRATEGIES.join(', ')}`);
  for (const s of list) {
    if (!(STRATEGIES as readonly string[]).includes(s)) {
      throw new StrategyParseError(`unknown proxy strategy ${JSON.stringify(s)}; known strategies: ${STRATEGIES.join(', ')}`);
    }
  }
  return list as Strategy[];
}

export interface Candidate {
  identifiers: AgentIdentifiers;
  draining: boolean;
}

/** Picks a candidate or returns undefined; `random` is injectable for tests. */
export function chooseAgent<T extends Candidate>(
  candidates: readonly T[],
  address: string,
  strategies: readonly Strategy[],
  random: () => number = Math.random,
): T | undefined {
  const live = candidates.filter((c) => !c.draining);
  let host: string;
  try {
    host = splitHostPort(address)[0];
  } catch {
    host = address;
  }
  const pick = (list: T[]): T | undefined => (list.length ? list[Math.floor(random() * list.length)] : undefined);
  for (const s of strategies) {
    let found: T | undefined;
    if (s === 'destHost') {
      found = pick(live.filter((c) => c.identifiers.host.includes(host) || c.identifiers.ipv4.includes(host) || c.identifiers.ipv6.includes(host)));
    } else if (s === 'defaultRoute') {
      found = pick(live.filter((c) => c.identifiers.defaultRoute));
    } else {
      found = pick(live);
    }
    if (found) return found;
  }
  return undefined;
}
