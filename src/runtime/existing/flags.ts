import type { RuntimeUpFlag } from '../flags.js';

/** `up`'s flags for the existing runtime's options (the lab file's runtime.existing). */
export const EXISTING_UP_FLAGS: readonly RuntimeUpFlag[] = [
  { flag: 'kubeconfig', option: 'kubeconfig', describe: 'the kubeconfig file with the contexts of your clusters' },
  { flag: 'hub-context', option: 'hubContext', describe: 'the context of the hub (CTX, or CTX=NAME to name the cluster)' },
  { flag: 'spoke-context', option: 'spokeContexts', array: true, describe: 'the context of a managed cluster, once per cluster (CTX or CTX=NAME)' },
  {
    flag: 'image-registry',
    option: 'imageRegistry',
    describe: 'push our image to REG (HOST[:PORT][/PATH], a registry your clusters pull from) and run it from there',
  },
  {
    flag: 'hub-server',
    option: 'hubServer',
    describe: "the hub's API server as your spokes reach it (default: kind/k3d contexts' internal endpoint, else the context's server)",
  },
];
