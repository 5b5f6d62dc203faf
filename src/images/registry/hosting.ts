import type { KubeObject } from '../../kube/objects.js';
import { registryInClusterHost } from './names.js';

/** Where the ConfigMap's `help` points: kind's local-registry guide, which this registry follows (ocm-lab's own: docs/kind.md, `ocm-lab registry`). */
const REGISTRY_HELP_URL = 'https://kind.sigs.k8s.io/docs/user/local-registry/';

/**
 * KEP-1755 (Communicating a Local Registry): ConfigMap `local-registry-hosting`
 * in `kube-public`, the one tools such as Tilt, Skaffold and ctlptl read to
 * find where to push (`host`) and what name the cluster pulls by.
 */
export function localRegistryHosting(hostPort: number): KubeObject {
  const hostInCluster = registryInClusterHost();
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'local-registry-hosting', namespace: 'kube-public' },
    data: {
      'localRegistryHosting.v1': [
        `host: "localhost:${hostPort}"`,
        `hostFromContainerRuntime: "${hostInCluster}"`,
        `hostFromClusterNetwork: "${hostInCluster}"`,
        `help: "${REGISTRY_HELP_URL}"`,
        '',
      ].join('\n'),
    },
  };
}
