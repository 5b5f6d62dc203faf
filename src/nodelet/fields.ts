import { ContainerStartError } from './errors.js';
import type { Container, NodeFacts, ObjectFieldSelector, Pod, ResourceFieldSelector } from './types.js';

const SUBSCRIPT = /^metadata\.(labels|annotations)\['([^']+)'\]$/;

function ipOf(pod: Pod, node: NodeFacts): string {
  return pod.status?.podIP ?? node.address;
}

/** The value of a downward-API field path, for env vars and downwardAPI volumes. */
export function fieldValue(pod: Pod, node: NodeFacts, selector: ObjectFieldSelector): string {
  const p = selector.fieldPath;
  const sub = SUBSCRIPT.exec(p);
  if (sub) {
    const map = sub[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations;
    return map?.[sub[2] as string] ?? '';
  }
  switch (p) {
    case 'metadata.name':
      return pod.metadata.name;
    case 'metadata.namespace':
      return pod.metadata.namespace ?? 'default';
    case 'metadata.uid':
      return pod.metadata.uid ?? '';
    case 'metadata.labels':
      return keyValueLines(pod.metadata.labels);
    case 'metadata.annotations':
      return keyValueLines(pod.metadata.annotations);
    case 'spec.nodeName':
      return pod.spec.nodeName ?? node.nodeName;
    case 'spec.serviceAccountName':
      return pod.spec.serviceAccountName ?? 'default';
    case 'status.podIP':
    case 'status.podIPs':
      return ipOf(pod, node);
    case 'status.hostIP':
    case 'status.hostIPs':
      return node.address;
    default:
      throw new ContainerStartError('CreateContainerConfigError', `unsupported fieldRef.fieldPath '${p}'`, false);
  }
}

/** `key="value"` lines, sorted, as the kubelet writes labels/annotations files. */
function keyValueLines(map: Record<string, string> | undefined): string {
  return Object.keys(map ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(map?.[k] ?? '')}`)
    .join('\n');
}

const BINARY_SUFFIX: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL_SUFFIX: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

/** A Kubernetes quantity ("500m", "128Mi", "2", "1e3") as a number. */
function parseQuantity(text: string): number {
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)([a-zA-Z]*)$/.exec(text.trim());
  if (!m) throw new ContainerStartError('CreateContainerConfigError', `'${text}' is not a quantity`, false);
  const n = Number(m[1]);
  const suffix = m[2] ?? '';
  const factor = BINARY_SUFFIX[suffix] ?? DECIMAL_SUFFIX[suffix];
  if (factor === undefined) throw new ContainerStartError('CreateContainerConfigError', `'${text}' has an unknown suffix '${suffix}'`, false);
  return n * factor;
}

/**
 * limits.cpu / requests.memory / … of a container, divided by the divisor and
 * rounded up like the kubelet does. Without a limit, the node's capacity.
 */
export function resourceFieldValue(containers: readonly Container[], ownName: string, node: NodeFacts, selector: ResourceFieldSelector): string {
  const name = selector.containerName || ownName;
  const container = containers.find((c) => c.name === name);
  if (!container) throw new ContainerStartError('CreateContainerConfigError', `resourceFieldRef names container '${name}', which the pod does not have`, false);
  const [kind, resource] = selector.resource.split('.', 2) as [string, string | undefined];
  if ((kind !== 'limits' && kind !== 'requests') || (resource !== 'cpu' && resource !== 'memory' && resource !== 'ephemeral-storage')) {
    throw new ContainerStartError('CreateContainerConfigError', `unsupported resourceFieldRef.resource '${selector.resource}'`, false);
  }
  const declared = container.resources?.[kind]?.[resource] ?? (kind === 'requests' ? container.resources?.limits?.[resource] : undefined);
  let value: number;
  if (declared !== undefined) value = parseQuantity(declared);
  else if (kind === 'requests') value = 0;
  else value = resource === 'cpu' ? node.cpuCores : node.memoryBytes;
  const divisor = parseQuantity(selector.divisor ?? '1');
  if (divisor <= 0) throw new ContainerStartError('CreateContainerConfigError', `resourceFieldRef.divisor '${selector.divisor ?? ''}' must be positive`, false);
  return String(Math.ceil(value / divisor));
}
