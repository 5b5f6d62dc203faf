import path from 'node:path';
import type { ClusterPkiPaths } from '../../pki/index.js';
import { API_SERVER_PORT, CONTROLLER_MANAGER_PORT, SERVICE_CIDR, type ClusterPlan } from './plan.js';
import type { ProcessSpec } from './process.js';

export type ControlPlaneComponent = 'etcd' | 'kube-apiserver' | 'kube-controller-manager';

/** Start order: each component needs the one before it. */
export const CONTROL_PLANE_COMPONENTS: ControlPlaneComponent[] = ['etcd', 'kube-apiserver', 'kube-controller-manager'];

export interface ControlPlaneBinaries {
  etcd: string;
  'kube-apiserver': string;
  'kube-controller-manager': string;
}

/**
 * Go's garbage collector lets the heap grow to 1.5× what is live, not 2×
 * (GOGC=50): the control planes are most of a spoke's memory, and a lab idles
 * far more than it works. `npm run bench -- scale` measured what it saves
 * (docs/reliability.md, "Scale").
 */
const GO_RUNTIME_ENV: Record<string, string> = { GOGC: '50' };

export function componentFiles(cluster: ClusterPlan, name: string): Pick<ProcessSpec, 'pidFile' | 'logFile'> {
  return { pidFile: path.join(cluster.runDir, `${name}.pid`), logFile: path.join(cluster.logDir, `${name}.log`) };
}

export function controllerManagerKubeconfigPath(cluster: ClusterPlan): string {
  return path.join(cluster.kubeconfigDir, 'controller-manager.kubeconfig');
}

function etcdSpec(cluster: ClusterPlan, binary: string): ProcessSpec {
  return {
    name: 'etcd',
    binary,
    prefix: cluster.netnsPrefix,
    extraEnv: GO_RUNTIME_ENV,
    ...componentFiles(cluster, 'etcd'),
    args: [
      `--name=${cluster.name}`,
      `--data-dir=${cluster.etcdDataDir}`,
      `--listen-client-urls=${cluster.etcdClientUrl}`,
      `--advertise-client-urls=${cluster.etcdClientUrl}`,
      `--listen-peer-urls=${cluster.etcdPeerUrl}`,
      `--initial-advertise-peer-urls=${cluster.etcdPeerUrl}`,
      `--initial-cluster=${cluster.name}=${cluster.etcdPeerUrl}`,
      '--initial-cluster-state=new',
      // A lab's data is disposable: skipping fsync makes writes cheap on a shared disk.
      '--unsafe-no-fsync=true',
      '--snapshot-count=10000',
      '--quota-backend-bytes=2147483648',
      '--log-level=warn',
    ],
  };
}

function apiServerSpec(cluster: ClusterPlan, binary: string, pki: ClusterPkiPaths): ProcessSpec {
  return {
    name: 'kube-apiserver',
    binary,
    prefix: cluster.netnsPrefix,
    extraEnv: GO_RUNTIME_ENV,
    ...componentFiles(cluster, 'kube-apiserver'),
    args: [
      `--advertise-address=${cluster.address}`,
      `--bind-address=${cluster.address}`,
      `--secure-port=${API_SERVER_PORT}`,
      `--etcd-servers=${cluster.etcdClientUrl}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      `--tls-cert-file=${pki.apiServerCert}`,
      `--tls-private-key-file=${pki.apiServerKey}`,
      `--client-ca-file=${pki.caCert}`,
      '--authorization-mode=Node,RBAC',
      '--enable-bootstrap-token-auth=true',
      '--allow-privileged=true',
      // ServiceAccount tokens (TokenRequest) signed with the cluster's own key.
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki.serviceAccountPub}`,
      `--service-account-signing-key-file=${pki.serviceAccountKey}`,
      // Aggregation layer: cluster-gateway registers an APIService on the hub.
      `--requestheader-client-ca-file=${pki.frontProxyCaCert}`,
      '--requestheader-allowed-names=front-proxy-client',
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
      `--proxy-client-cert-file=${pki.frontProxyClientCert}`,
      `--proxy-client-key-file=${pki.frontProxyClientKey}`,
      // The nodelet's kubelet API (logs, exec, port-forward): mutual TLS with the cluster CA, dialled at the Node's InternalIP.
      `--kubelet-client-certificate=${pki.kubeletClientCert}`,
      `--kubelet-client-key=${pki.kubeletClientKey}`,
      `--kubelet-certificate-authority=${pki.caCert}`,
      '--kubelet-preferred-address-types=InternalIP,Hostname',
      // No kube-proxy in the lab: the aggregator dials endpoint addresses itself.
      '--enable-aggregator-routing=true',
      '--profiling=false',
      '--v=1',
      // Kubernetes ≥ 1.37 refuses a loopback advertise address while it reconciles the `kubernetes` endpoints
      // (docs/notes.md#kube-apiserver-v137-refuses-a-loopback-advertise-address).
      ...(cluster.address.startsWith('127.') ? ['--endpoint-reconciler-type=none'] : []),
    ],
  };
}

function controllerManagerSpec(cluster: ClusterPlan, binary: string, pki: ClusterPkiPaths): ProcessSpec {
  const kubeconfig = controllerManagerKubeconfigPath(cluster);
  return {
    name: 'kube-controller-manager',
    binary,
    prefix: cluster.netnsPrefix,
    extraEnv: GO_RUNTIME_ENV,
    ...componentFiles(cluster, 'kube-controller-manager'),
    args: [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      `--bind-address=${cluster.address}`,
      `--secure-port=${CONTROLLER_MANAGER_PORT}`,
      `--cluster-name=${cluster.name}`,
      // Signs kubernetes.io/kube-apiserver-client CSRs (OCM registration) with the CA the apiserver trusts.
      `--cluster-signing-cert-file=${pki.caCert}`,
      `--cluster-signing-key-file=${pki.caKey}`,
      `--root-ca-file=${pki.caCert}`,
      `--service-account-private-key-file=${pki.serviceAccountKey}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--use-service-account-credentials=true',
      '--controllers=*,bootstrapsigner,tokencleaner',
      '--leader-elect=false',
      '--profiling=false',
      '--v=1',
    ],
  };
}

export function controlPlaneSpecs(cluster: ClusterPlan, binaries: ControlPlaneBinaries, pki: ClusterPkiPaths): Record<ControlPlaneComponent, ProcessSpec> {
  return {
    etcd: etcdSpec(cluster, binaries.etcd),
    'kube-apiserver': apiServerSpec(cluster, binaries['kube-apiserver'], pki),
    'kube-controller-manager': controllerManagerSpec(cluster, binaries['kube-controller-manager'], pki),
  };
}
