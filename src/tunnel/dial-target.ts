/**
 * What the agent agrees to dial. Like upstream's agent it dials any host the
 * server forwards (the server and its clients are authenticated by mTLS, and
 * cluster-proxy reaches loopback and in-cluster names on purpose), but only
 * TCP, and only to a well-formed `host:port`: upstream hands the protocol to
 * Go's net.Dial, so "unix" or "udp" would be dialled too, and Node throws out
 * of net.connect for a port out of range instead of failing the dial.
 */

export class DialTargetError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'DialTargetError';
  }
}

/** A DNS name or IPv4 address; no spaces, no control characters, nothing a resolver might read as options. */
const HOST = /^[A-Za-z0-9_.-]+$/;
/** The inside of `[...]`: an IPv6 address, optionally with a zone. */
const IPV6 = /^[0-9A-Fa-f:.]+(%[A-Za-z0-9_.-]+)?$/;

/** Checks a DIAL_REQ's protocol and address; returns what to dial or throws DialTargetError saying why not. */
export function checkDialTarget(protocol: string, address: string): { host: string; port: number } {
  if (protocol !== 'tcp') throw new DialTargetError(`protocol ${JSON.stringify(protocol)} is not supported; only tcp`);
  const m = /^\[([^\]]*)\]:([0-9]+)$/.exec(address) ?? /^([^:[\]]*):([0-9]+)$/.exec(address);
  if (!m) throw new DialTargetError(`dial address ${JSON.stringify(address)} is not host:port`);
  const [, host, portText] = m as unknown as [string, string, string];
  if (host === '') throw new DialTargetError(`dial address ${JSON.stringify(address)} has no host`);
  const bracketed = address.startsWith('[');
  if (bracketed ? !IPV6.test(host) : !HOST.test(host)) {
    throw new DialTargetError(`dial address ${JSON.stringify(address)}: ${JSON.stringify(host)} is not a host name or IP address`);
  }
  const port = portText.length > 5 ? Infinity : Number(portText);
  if (port < 1 || port > 65535) throw new DialTargetError(`dial address ${JSON.stringify(address)}: port ${portText} is out of range 1-65535`);
  return { host, port };
}
