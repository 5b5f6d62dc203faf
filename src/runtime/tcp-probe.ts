/**
 * The command that opens one TCP connection and closes it, run inside a
 * cluster's network (a VPC namespace, a kind node): bash's /dev/tcp needs no
 * tool in the node. Host and port are passed as arguments, never spliced into
 * the script.
 */
export function tcpProbeArgv(target: { host: string; port: number }, timeoutMs: number): string[] {
  const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  return ['timeout', String(seconds), 'bash', '-c', 'exec 3<>"/dev/tcp/$0/$1"', target.host.replace(/^\[|\]$/g, ''), String(target.port)];
}
