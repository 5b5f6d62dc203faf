import { LABEL_LAB, LABEL_ROLE } from '../../images/docker.js';

/** Names of a lab's Docker and kind objects: one place, so up, down, status and --dry-run agree. */

/** The kind cluster of a lab cluster (its node container is `<this>-control-plane`). */
export function kindClusterName(lab: string, cluster: string): string {
  return `${lab}-${cluster}`;
}

export function nodeContainerName(lab: string, cluster: string): string {
  return `${kindClusterName(lab, cluster)}-control-plane`;
}

export function vpcNetworkName(lab: string, vpc: string): string {
  return `ocm-lab-${lab}-${vpc}`;
}

/** The forwarding container; also the DNS name spokes reach the hub by, on every network it is on. */
export function hubEndpointName(lab: string): string {
  return `ocm-lab-${lab}-hub-endpoint`;
}

const LABEL_VPC = 'dev.ocm-lab.vpc';
/** kind's own label on node containers: the kind cluster they belong to. */
export const KIND_CLUSTER_LABEL = 'io.x-k8s.kind.cluster';

export function vpcNetworkLabels(lab: string, vpc: string): Record<string, string> {
  return { [LABEL_LAB]: lab, [LABEL_ROLE]: 'vpc', [LABEL_VPC]: vpc };
}

export function hubEndpointLabels(lab: string): Record<string, string> {
  return { [LABEL_LAB]: lab, [LABEL_ROLE]: 'hub-endpoint' };
}
