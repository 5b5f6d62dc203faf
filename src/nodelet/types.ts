/**
 * The parts of Kubernetes objects the nodelet reads and writes, as the API
 * server sends them (JSON: times are RFC 3339 strings). Kept to what we use.
 */

interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  creationTimestamp?: string;
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
}

export interface ObjectFieldSelector {
  apiVersion?: string;
  fieldPath: string;
}

export interface KeySelector {
  name?: string;
  key: string;
  optional?: boolean;
}

export interface ResourceFieldSelector {
  containerName?: string;
  resource: string;
  divisor?: string;
}

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: ObjectFieldSelector;
    resourceFieldRef?: ResourceFieldSelector;
    secretKeyRef?: KeySelector;
    configMapKeyRef?: KeySelector;
  };
}

interface EnvFromSource {
  prefix?: string;
  configMapRef?: { name?: string; optional?: boolean };
  secretRef?: { name?: string; optional?: boolean };
}

interface VolumeMount {
  name: string;
  mountPath: string;
  subPath?: string;
  readOnly?: boolean;
}

export interface Probe {
  httpGet?: { path?: string; port: number | string; host?: string; scheme?: string; httpHeaders?: { name: string; value: string }[] };
  tcpSocket?: { port: number | string; host?: string };
  exec?: { command?: string[] };
  grpc?: { port: number; service?: string };
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
  successThreshold?: number;
  /** Grace period when a failed liveness or startup probe kills the container (overrides the pod's). */
  terminationGracePeriodSeconds?: number;
}

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  volumeMounts?: VolumeMount[];
  ports?: { containerPort: number; hostPort?: number; name?: string; protocol?: string }[];
  resources?: { limits?: Record<string, string>; requests?: Record<string, string> };
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
}

export interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}

export interface DownwardAPIVolumeFile {
  path: string;
  fieldRef?: ObjectFieldSelector;
  resourceFieldRef?: ResourceFieldSelector;
  mode?: number;
}

interface ProjectedSource {
  secret?: { name?: string; items?: KeyToPath[]; optional?: boolean };
  configMap?: { name?: string; items?: KeyToPath[]; optional?: boolean };
  downwardAPI?: { items?: DownwardAPIVolumeFile[] };
  serviceAccountToken?: { audience?: string; expirationSeconds?: number; path: string };
}

export interface Volume {
  name: string;
  secret?: { secretName?: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  configMap?: { name?: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  projected?: { sources?: ProjectedSource[]; defaultMode?: number };
  downwardAPI?: { items?: DownwardAPIVolumeFile[]; defaultMode?: number };
  emptyDir?: Record<string, unknown>;
  [other: string]: unknown;
}

interface PodSpec {
  nodeName?: string;
  schedulerName?: string;
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  restartPolicy?: 'Always' | 'OnFailure' | 'Never';
  terminationGracePeriodSeconds?: number;
  initContainers?: Container[];
  containers: Container[];
  volumes?: Volume[];
  hostNetwork?: boolean;
}

export interface PodCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
}

interface ContainerStateWaiting {
  reason: string;
  message?: string;
}
interface ContainerStateRunning {
  startedAt: string;
}
export interface ContainerStateTerminated {
  exitCode: number;
  signal?: number;
  reason: string;
  message?: string;
  startedAt?: string;
  finishedAt: string;
  containerID?: string;
}
export interface ContainerState {
  waiting?: ContainerStateWaiting;
  running?: ContainerStateRunning;
  terminated?: ContainerStateTerminated;
}

export interface ContainerStatus {
  name: string;
  image: string;
  imageID: string;
  containerID?: string;
  ready: boolean;
  started: boolean;
  restartCount: number;
  state: ContainerState;
  lastState: ContainerState;
}

export interface PodStatus {
  phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
  conditions?: PodCondition[];
  message?: string;
  reason?: string;
  hostIP?: string;
  hostIPs?: { ip: string }[];
  podIP?: string;
  podIPs?: { ip: string }[];
  startTime?: string;
  containerStatuses?: ContainerStatus[];
  initContainerStatuses?: ContainerStatus[];
  qosClass?: string;
}

export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: PodSpec;
  status?: PodStatus;
}

export interface Secret {
  metadata: ObjectMeta;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

export interface ConfigMap {
  metadata: ObjectMeta;
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
}

/** Where env vars and volumes get the objects they reference; the nodelet reads them with its node credentials. */
export interface ObjectSource {
  secret(namespace: string, name: string): Promise<Secret | null>;
  configMap(namespace: string, name: string): Promise<ConfigMap | null>;
}

/** Node facts a pod's downward API can read. */
export interface NodeFacts {
  nodeName: string;
  /** The cluster's address: every pod of the cluster shares it (host networking). */
  address: string;
  cpuCores: number;
  memoryBytes: number;
}
