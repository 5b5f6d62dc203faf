import type { ServiceLike } from './service-rules.js';

/** A Service as its DNS names need it: ClusterIP or ExternalName. */
export type ServiceWithName = ServiceLike & { spec?: ServiceLike['spec'] & { externalName?: string } };

const CLUSTER_DOMAIN = 'cluster.local';

/** The names a pod in `podNamespace` resolves a Service by, as cluster DNS with its search path would answer them. */
function namesOf(name: string, namespace: string, podNamespace: string): string[] {
  const fqdn = `${name}.${namespace}.svc.${CLUSTER_DOMAIN}`;
  return [...(namespace === podNamespace ? [name] : []), `${name}.${namespace}`, `${name}.${namespace}.svc`, fqdn];
}

function clusterIP(service: ServiceWithName): string | undefined {
  const ip = service.spec?.clusterIP;
  return ip && ip !== 'None' ? ip : undefined;
}

/**
 * /etc/hosts entries that stand in for cluster DNS (the nodelet runs none): every
 * ClusterIP Service by its names, and an ExternalName Service that points at
 * another Service of the cluster (`<svc>.<ns>.svc[.cluster.local]`) by that
 * Service's ClusterIP. upstream cluster-proxy's agent dials such an ExternalName
 * (`<cluster>` → `kubernetes.default.svc.cluster.local`). Other external names
 * are left out: only a resolver could answer them.
 */
export function serviceHostAliases(services: readonly ServiceWithName[], podNamespace: string): { ip: string; hostnames: string[] }[] {
  const byFqdn = new Map<string, string>();
  for (const s of services) {
    const ip = clusterIP(s);
    if (ip) byFqdn.set(`${s.metadata.name}.${s.metadata.namespace ?? 'default'}.svc.${CLUSTER_DOMAIN}`, ip);
  }
  const out: { ip: string; hostnames: string[] }[] = [];
  for (const s of [...services].sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`))) {
    const namespace = s.metadata.namespace ?? 'default';
    let ip = clusterIP(s);
    if (!ip && s.spec?.type === 'ExternalName' && s.spec.externalName) {
      const target = s.spec.externalName.replace(/\.$/, '');
      ip = byFqdn.get(target.endsWith(`.svc.${CLUSTER_DOMAIN}`) ? target : `${target}.${CLUSTER_DOMAIN}`);
    }
    if (ip) out.push({ ip, hostnames: namesOf(s.metadata.name, namespace, podNamespace) });
  }
  return out;
}
