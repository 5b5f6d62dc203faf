import fs from 'node:fs/promises';
import { run } from '../../../util/exec.js';

const CAP_NET_ADMIN = 12n;
const CAP_SYS_ADMIN = 21n;

function hasCapability(capEff: bigint, cap: bigint): boolean {
  return (capEff & (1n << cap)) !== 0n;
}

/**
 * Whether this process can create network namespaces, veths and forwarding
 * rules: CAP_NET_ADMIN (links, rules), CAP_SYS_ADMIN (`ip netns add` mounts the
 * namespace), and working `ip`, `iptables`, `iptables-restore` and `sysctl`.
 */
export async function probeNetworkCapability(): Promise<{ canIsolate: boolean; reason?: string }> {
  const status = await fs.readFile('/proc/self/status', 'utf8').catch(() => '');
  const capEff = BigInt(`0x${/CapEff:\s*([0-9a-f]+)/i.exec(status)?.[1] ?? '0'}`);
  if (!hasCapability(capEff, CAP_NET_ADMIN)) return { canIsolate: false, reason: 'not root and no CAP_NET_ADMIN' };
  if (!hasCapability(capEff, CAP_SYS_ADMIN)) return { canIsolate: false, reason: 'no CAP_SYS_ADMIN (needed to create network namespaces)' };
  const probes: [string, string[], string][] = [
    ['ip', ['netns', 'list'], 'iproute2'],
    ['iptables', ['-t', 'filter', '-S', 'FORWARD'], 'iptables'],
    ['iptables-restore', ['--version'], 'iptables'],
    ['sysctl', ['-n', 'net.ipv4.ip_forward'], 'procps'],
  ];
  for (const [tool, args, pkg] of probes) {
    const r = await run(tool, args, { allowFailure: true }).catch(() => null);
    if (!r || r.exitCode !== 0) {
      const said = r ? (r.stderr || r.stdout).trim().split('\n').pop() : '';
      return { canIsolate: false, reason: `'${tool} ${args.join(' ')}' does not work${said ? ` (${said})` : ''}; install ${pkg}` };
    }
  }
  return { canIsolate: true };
}
