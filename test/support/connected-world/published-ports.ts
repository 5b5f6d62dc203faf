/**
 * What a Docker Desktop-like port forwarder needs from the engine, as pure logic: which containers started or died
 * (`docker events --format '{{json .}}'`), which of their ports the engine published where the host may reach them
 * (`docker inspect`'s NetworkSettings.Ports), and which host listeners to open or close as containers come and go.
 */

export interface ContainerEvent {
  id: string;
  action: 'start' | 'die';
}

/** One line of `docker events --format '{{json .}}'`: a container's start or die (null for any other event or line). */
export function parseContainerEvent(line: string): ContainerEvent | null {
  let event: { Type?: unknown; Action?: unknown; id?: unknown; Actor?: { ID?: unknown } };
  try {
    event = JSON.parse(line) as typeof event;
  } catch {
    return null;
  }
  if (event === null || typeof event !== 'object' || event.Type !== 'container') return null;
  const id = typeof event.Actor?.ID === 'string' ? event.Actor.ID : typeof event.id === 'string' ? event.id : '';
  if (!id || (event.Action !== 'start' && event.Action !== 'die')) return null;
  return { id, action: event.Action };
}

/** Host addresses a published port is forwarded from: the engine's loopback and every address (IPv4 and IPv6). */
const FORWARDED_HOST_IPS = new Set(['127.0.0.1', '0.0.0.0', '', '::', '::1']);

/**
 * The TCP ports of `docker inspect -f '{{json .NetworkSettings.Ports}}'` published on the engine's loopback or on every
 * address, sorted, each once (an IPv4 and an IPv6 binding of one port are one host listener). UDP and ports published on
 * another address of the engine (a bridge's) are not forwarded, as Docker Desktop forwards neither to 127.0.0.1.
 */
export function forwardedPorts(ports: unknown): number[] {
  if (ports === null || typeof ports !== 'object') return [];
  const found = new Set<number>();
  for (const [key, bindings] of Object.entries(ports as Record<string, unknown>)) {
    if (!key.endsWith('/tcp') || !Array.isArray(bindings)) continue;
    for (const b of bindings as { HostIp?: unknown; HostPort?: unknown }[]) {
      const port = Number(b?.HostPort);
      if (FORWARDED_HOST_IPS.has(String(b?.HostIp ?? '')) && Number.isInteger(port) && port > 0 && port < 65536) found.add(port);
    }
  }
  return [...found].sort((a, b) => a - b);
}

/** Which host ports to listen on: each held by the containers that publish it, opened on the first, closed after the last. */
export class PublishedPortTable {
  private readonly byContainer = new Map<string, number[]>();

  /** A container started publishing `ports` (again, after a restart): what no other container held is opened, what it no longer publishes closed. */
  started(id: string, ports: readonly number[]): { open: number[]; close: number[] } {
    const old = this.byContainer.get(id) ?? [];
    this.byContainer.delete(id);
    const others = this.held();
    const now = [...new Set(ports)];
    this.byContainer.set(id, now);
    return {
      open: now.filter((p) => !others.has(p) && !old.includes(p)).sort((a, b) => a - b),
      close: old.filter((p) => !others.has(p) && !now.includes(p)).sort((a, b) => a - b),
    };
  }

  /** A container died: the ports it held that no other container holds are to be closed. */
  stopped(id: string): { open: number[]; close: number[] } {
    const ports = this.byContainer.get(id) ?? [];
    this.byContainer.delete(id);
    const still = this.held();
    return { open: [], close: ports.filter((p) => !still.has(p)).sort((a, b) => a - b) };
  }

  /** Every port some container holds. */
  held(): Set<number> {
    return new Set([...this.byContainer.values()].flat());
  }
}
