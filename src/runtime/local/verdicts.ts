import type { HostFacts } from '../../host/facts.js';
import { verdict, type RuntimeVerdict } from '../verdict.js';

/** The local runtime: control planes in network namespaces, as root on Linux. */
export function localVerdicts(kubernetes: string, facts: HostFacts): RuntimeVerdict[] {
  return [
    {
      key: 'local',
      label: `local (${kubernetes})`,
      verdict: verdict([facts.platform.os !== 'linux' && 'network namespaces are Linux only', !facts.root && 'needs root (network namespaces, iptables)']),
    },
  ];
}
