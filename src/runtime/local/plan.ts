import path from 'node:path';
import type { LabConfig } from '../../config/index.js';

/** Fixed facts about how a cluster's control plane is laid out inside its VPC. */
export const API_SERVER_PORT = 6443;
export const ETCD_CLIENT_PORT = 2379;
const ETCD_PEER_PORT = 2380;
export const CONTROLLER_MANAGER_PORT = 10257;
export { SERVICE_CIDR, SERVICE_IP } from '../../kube/service-network.js';

/** Where one cluster of a lab lives: its address, endpoints and files. */
export interface ClusterPlan {
  name: string;
  vpc: string;
  hub: boolean;
  /** The cluster's own address inside its VPC (or a 127.x address without network namespaces). */
  address: string;
  /** `ip netns exec <ns>` or empty: how to run a process inside the cluster's VPC. */
  netnsPrefix: string[];
  netns: string | null;
  /** The range pods of this cluster take their addresses from (inside the VPC subnet); null where pods share the node address (loopback mode). */
  podCidr: string | null;
  apiServerUrl: string;
  etcdClientUrl: string;
  etcdPeerUrl: string;
  dir: string;
  pkiDir: string;
  etcdDataDir: string;
  logDir: string;
  runDir: string;
  kubeconfigDir: string;
}

export interface ClusterAddressing {
  address: string;
  netns: string | null;
  netnsPrefix: string[];
  podCidr: string | null;
}

export function planCluster(labDirectory: string, cluster: LabConfig['clusters'][number], addressing: ClusterAddressing): ClusterPlan {
  const dir = path.join(labDirectory, 'clusters', cluster.name);
  const host = addressing.address;
  return {
    name: cluster.name,
    vpc: cluster.vpc,
    hub: cluster.hub,
    address: host,
    netns: addressing.netns,
    netnsPrefix: addressing.netnsPrefix,
    podCidr: addressing.podCidr,
    apiServerUrl: `https://${host}:${API_SERVER_PORT}`,
    etcdClientUrl: `http://${host}:${ETCD_CLIENT_PORT}`,
    etcdPeerUrl: `http://${host}:${ETCD_PEER_PORT}`,
    dir,
    pkiDir: path.join(dir, 'pki'),
    etcdDataDir: path.join(dir, 'etcd'),
    logDir: path.join(dir, 'logs'),
    runDir: path.join(dir, 'run'),
    kubeconfigDir: path.join(dir, 'kubeconfigs'),
  };
}
