import crypto from 'node:crypto';

/** The parts of a Service the rules need. */
export interface ServiceLike {
  metadata: { name: string; namespace?: string };
  spec?: {
    type?: string;
    clusterIP?: string;
    clusterIPs?: string[];
    ports?: { name?: string; protocol?: string; port: number }[];
  };
}

/** The parts of a discovery.k8s.io/v1 EndpointSlice the rules need. */
export interface EndpointSliceLike {
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  addressType?: string;
  endpoints?: { addresses?: string[]; conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean } }[];
  ports?: { name?: string; protocol?: string; port?: number }[];
}

export interface ServiceRulesOptions {
  /**
   * Where `default/kubernetes` goes when its EndpointSlice has no endpoint yet: the
   * cluster's API server (address and secure port).
   */
  apiServer?: { ip: string; port: number };
}

export const SERVICES_CHAIN = 'OCMLAB-SERVICES';
const SERVICE_LABEL = 'kubernetes.io/service-name';
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

interface Frontend {
  id: string;
  ip: string;
  port: number;
  protocol: string;
  backends: string[];
}

/** A chain per service port: `OCMLAB-SVC-` + 16 hex digits (27 characters, within iptables' 28). */
function chainOf(id: string): string {
  return `OCMLAB-SVC-${crypto.createHash('sha256').update(id).digest('hex').slice(0, 16).toUpperCase()}`;
}

function quote(text: string): string {
  return `"${text.replace(/(["\\])/g, '\\$1')}"`;
}

/** Endpoint `ip:port`s per service port, from every slice of the service; ready endpoints, or serving terminating ones when none is ready (as kube-proxy). */
function backendsOf(service: ServiceLike, port: { name?: string; protocol?: string }, slices: EndpointSliceLike[]): string[] {
  const ready = new Set<string>();
  const serving = new Set<string>();
  const protocol = port.protocol ?? 'TCP';
  for (const slice of slices) {
    if (slice.metadata.namespace !== service.metadata.namespace || slice.metadata.labels?.[SERVICE_LABEL] !== service.metadata.name) continue;
    if (slice.addressType && slice.addressType !== 'IPv4') continue;
    const target = slice.ports?.find((p) => (p.name ?? '') === (port.name ?? '') && (p.protocol ?? 'TCP') === protocol);
    if (!target?.port) continue;
    for (const endpoint of slice.endpoints ?? []) {
      const c = endpoint.conditions ?? {};
      for (const address of endpoint.addresses ?? []) {
        if (!IPV4.test(address)) continue;
        if (c.ready !== false) ready.add(`${address}:${target.port}`);
        else if (c.serving && c.terminating) serving.add(`${address}:${target.port}`);
      }
    }
  }
  return [...(ready.size ? ready : serving)].sort();
}

function frontends(services: ServiceLike[], slices: EndpointSliceLike[], opts: ServiceRulesOptions): Frontend[] {
  const result: Frontend[] = [];
  for (const service of services) {
    const spec = service.spec ?? {};
    const ip = spec.clusterIP;
    if (!ip || ip === 'None' || !IPV4.test(ip) || spec.type === 'ExternalName') continue;
    const name = `${service.metadata.namespace ?? 'default'}/${service.metadata.name}`;
    for (const port of spec.ports ?? []) {
      const protocol = port.protocol ?? 'TCP';
      let backends = backendsOf(service, port, slices);
      if (!backends.length && name === 'default/kubernetes' && opts.apiServer) backends = [`${opts.apiServer.ip}:${opts.apiServer.port}`];
      result.push({ id: `${name}:${port.name ?? ''}:${protocol}`, ip, port: port.port, protocol: protocol.toLowerCase(), backends });
    }
  }
  return result.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * The rules that make ClusterIP Services work from a pod, as `iptables-restore` input
 * that replaces the pod namespace's nat and filter tables (the pod has nothing else in
 * them). In nat OUTPUT, each ClusterIP:port is rewritten to one of its endpoints,
 * chosen at random with equal weight; a port without endpoints is rejected in filter
 * OUTPUT ("connection refused"), as kube-proxy does. Same input, same text, so a
 * caller can skip writing rules that did not change.
 *
 * Not covered: NodePort, LoadBalancer, externalIPs, session affinity, IPv6.
 */
export function renderServiceRules(services: ServiceLike[], slices: EndpointSliceLike[], opts: ServiceRulesOptions = {}): string {
  const all = frontends(services, slices, opts);
  const served = all.filter((f) => f.backends.length);
  const nat = ['*nat', ':PREROUTING ACCEPT [0:0]', ':INPUT ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ':POSTROUTING ACCEPT [0:0]', `:${SERVICES_CHAIN} - [0:0]`];
  for (const f of served) nat.push(`:${chainOf(f.id)} - [0:0]`);
  nat.push(`-A OUTPUT -m comment --comment "ocm-lab: ClusterIP services" -j ${SERVICES_CHAIN}`);
  for (const f of served) {
    nat.push(`-A ${SERVICES_CHAIN} -d ${f.ip}/32 -p ${f.protocol} -m ${f.protocol} --dport ${f.port} -m comment --comment ${quote(f.id)} -j ${chainOf(f.id)}`);
  }
  for (const f of served) {
    f.backends.forEach((backend, i) => {
      const left = f.backends.length - i;
      const pick = left > 1 ? ` -m statistic --mode random --probability ${(1 / left).toFixed(10)}` : '';
      nat.push(`-A ${chainOf(f.id)}${pick} -p ${f.protocol} -m ${f.protocol} -j DNAT --to-destination ${backend}`);
    });
  }
  nat.push('COMMIT');
  const filter = ['*filter', ':INPUT ACCEPT [0:0]', ':FORWARD ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]'];
  for (const f of all.filter((x) => !x.backends.length)) {
    filter.push(
      `-A OUTPUT -d ${f.ip}/32 -p ${f.protocol} -m ${f.protocol} --dport ${f.port} ` +
        `-m comment --comment ${quote(`${f.id} has no endpoints`)} -j REJECT --reject-with icmp-port-unreachable`,
    );
  }
  filter.push('COMMIT');
  return `${[...nat, ...filter].join('\n')}\n`;
}
