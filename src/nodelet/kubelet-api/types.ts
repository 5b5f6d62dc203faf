import type net from 'node:net';
import type { Readable, Writable } from 'node:stream';

/** A command started in a container for `kubectl exec`. */
export interface ExecProcess {
  /** Null when the exec was started without stdin. */
  stdin: Writable | null;
  stdout: Readable;
  /** Null with a tty (the terminal merges stderr into stdout). */
  stderr: Readable | null;
  exited: Promise<{ exitCode: number }>;
  /** Only with a tty. */
  resize?(cols: number, rows: number): void;
  kill(): void;
}

export interface LogStreamOptions {
  follow: boolean;
  tailLines?: number;
  /** Already resolved from sinceSeconds when the request gave that instead. */
  sinceTime?: Date;
  timestamps: boolean;
  previous: boolean;
  limitBytes?: number;
  /** Which of the container's streams (the PodLogsQuerySplitStreams `stream` parameter); absent means both. */
  stream?: 'Stdout' | 'Stderr';
}

/** What the kubelet API needs from the node; the nodelet implements it. */
export interface KubeletBackend {
  /** Pod objects bound to this node (served on /pods and used to answer 404 for unknown pods or containers). */
  pods(): unknown[];
  /** Writes the container's log to `out`; throws KubeletNotFound for an unknown pod/container/previous instance. */
  streamLogs(ns: string, pod: string, container: string, opts: LogStreamOptions, out: Writable, signal: AbortSignal): Promise<void>;
  exec(ns: string, pod: string, container: string, command: string[], opts: { tty: boolean; stdin: boolean }): Promise<ExecProcess>;
  /** A connection to `port` inside the pod's network namespace. */
  dialPort(ns: string, pod: string, port: number): Promise<net.Socket>;
}

/** Thrown by a backend for a pod, container or log that does not exist; answered with 404. */
export class KubeletNotFound extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KubeletNotFound';
  }
}

/** Who may use the API: a client certificate matches if its CN is listed or one of its O entries is. */
export interface AllowedIdentities {
  commonNames: string[];
  groups: string[];
}

/** The identity kube-apiserver presents with --kubelet-client-certificate, as kubeadm and our PKI issue it. */
export const DEFAULT_ALLOWED_IDENTITIES: AllowedIdentities = {
  commonNames: ['kube-apiserver-kubelet-client'],
  groups: ['system:masters'],
};

export interface KubeletServerOptions {
  /** The Node's InternalIP (kube-apiserver uses --kubelet-preferred-address-types=InternalIP). */
  address: string;
  /** 10250 in a lab; 0 picks a free port (tests). */
  port: number;
  certPem?: string;
  certFile?: string;
  keyPem?: string;
  keyFile?: string;
  /** CA that signed the API server's kubelet client certificate. */
  clientCaPem?: string;
  clientCaFile?: string;
  backend: KubeletBackend;
  log?: (line: string) => void;
  allowedIdentities?: AllowedIdentities;
  /** How long a SPDY client may take to open the streams of an exec or a port-forward pair (kubelet default 30s). */
  streamCreationTimeoutMs?: number;
}

export interface KubeletServer {
  port: number;
  /** Stops listening, ends every connection and kills commands still running. */
  close(): Promise<void>;
}
