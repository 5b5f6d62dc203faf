import path from 'node:path';
import type { ClusterPlan } from '../lab/plan.js';
import { adminKubeconfigPath } from '../runtime/local/kubeconfigs.js';

/** Where the OCM parts of one cluster keep their files (all under the cluster's lab directory). */
export interface OcmLayout {
  dir: string;
  adminKubeconfig: string;
  /** Serving certificate of the addon conversion webhook (controller-runtime reads tls.crt/tls.key here). */
  webhookCertDir: string;
  /** Spoke only: the bootstrap kubeconfig (hub address reachable from the spoke's VPC, bootstrap token). */
  bootstrapKubeconfig: string;
  /** Spoke only: where the agent writes the hub kubeconfig it obtains through its CSR. */
  hubKubeconfigDir: string;
  /** Spoke only: the stable agent ID (upstream: the Klusterlet's UID). */
  agentIdFile: string;
  /** TMPDIR of each component: library-go writes self-signed serving certs there; down removes it with the lab. */
  tmpDir: (component: string) => string;
}

export function ocmLayout(cluster: ClusterPlan): OcmLayout {
  const dir = path.join(cluster.dir, 'ocm');
  return {
    dir,
    adminKubeconfig: adminKubeconfigPath(cluster),
    webhookCertDir: path.join(dir, 'addon-webhook-certs'),
    bootstrapKubeconfig: path.join(dir, 'bootstrap.kubeconfig'),
    hubKubeconfigDir: path.join(dir, 'hub-kubeconfig'),
    agentIdFile: path.join(dir, 'agent-id'),
    tmpDir: (component) => path.join(dir, 'tmp', component),
  };
}
