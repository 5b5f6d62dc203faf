import type { NetworkResource } from './apply.js';
import { iptablesListing, listLinks, listNetns } from './machine.js';
import { chainName, hostChainNames, interfacePrefix, netnsPrefixOf } from './plan.js';
import { probeNetworkCapability } from './probe.js';
import { chainExistsIn, rulesJumpingTo } from './rules.js';

/**
 * What a lab left on the machine, found by name alone (for `down` when the
 * state file is gone): namespaces `ocmlab.<lab>.*`, host links `ol<hash><i>h`,
 * and the chains `OCMLAB-<HASH>[-IN|-OUT]` with whatever still jumps to them.
 * In the order teardownNetwork expects (it removes the last first).
 */
export async function findLeftovers(labName: string): Promise<NetworkResource[]> {
  if (!(await probeNetworkCapability()).canIsolate) return [];
  const found: NetworkResource[] = [];
  const nsPrefix = netnsPrefixOf(labName);
  for (const name of await listNetns()) {
    // Another lab's name may start with ours plus a dot-free suffix, but never with ours plus a dot.
    if (name.startsWith(nsPrefix) && !name.slice(nsPrefix.length).includes('.')) found.push({ kind: 'netns', name });
  }
  const ownLink = new RegExp(`^${interfacePrefix(labName)}\\d+h$`);
  for (const name of await listLinks()) if (ownLink.test(name)) found.push({ kind: 'link', name });
  const listing = await iptablesListing('filter');
  const host = hostChainNames(labName);
  for (const chain of [chainName(labName), host.input, host.output]) {
    const jumps = rulesJumpingTo(listing, chain);
    if (chainExistsIn(listing, chain) || jumps.length)
      found.push({ kind: 'iptables-chain', table: 'filter', chain, jumpFrom: [...new Set(jumps.map((j) => j.from))] });
  }
  return found;
}
