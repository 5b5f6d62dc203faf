import os from 'node:os';
import { isStatus, type KubeClient } from '../kube/client.js';
import { sleep } from '../kube/wait.js';
import { rfc3339 } from './status.js';
import type { NodeFacts } from './types.js';

export interface NodeAgentOptions {
  client: KubeClient;
  node: NodeFacts;
  /** Shown as the node's kubelet version (kubectl get nodes: VERSION). */
  version: string;
  /** Where the kubelet API listens on the node's InternalIP (the API server dials it for logs, exec, port-forward); 0: none. */
  kubeletPort: number;
  leaseDurationSeconds: number;
  renewIntervalMs: number;
  /** Full Node status is sent this often even when nothing changed (the lease is the heartbeat). */
  statusIntervalMs: number;
  log(line: string): void;
}

const LEASE_NAMESPACE = 'kube-node-lease';

/** MicroTime as the API server parses it: RFC 3339 with exactly six fractional digits. */
export function microTime(d: Date): string {
  return `${d.toISOString().slice(0, 23)}000Z`;
}

function nodeObject(o: NodeAgentOptions): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: o.node.nodeName,
      labels: {
        'kubernetes.io/hostname': o.node.nodeName,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': os.arch() === 'x64' ? 'amd64' : os.arch(),
        'ocm-lab.io/nodelet': 'true',
      },
    },
    spec: {},
  };
}

function nodeStatus(o: NodeAgentOptions, now: Date, since: string): Record<string, unknown> {
  const t = rfc3339(now);
  const cond = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: t,
    lastTransitionTime: since,
  });
  const resources = {
    cpu: String(o.node.cpuCores),
    memory: `${Math.floor(o.node.memoryBytes / 1024)}Ki`,
    pods: '110',
    'ephemeral-storage': '100Gi',
  };
  return {
    conditions: [
      cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'nodelet has sufficient memory available'),
      cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'nodelet has no disk pressure'),
      cond('PIDPressure', 'False', 'KubeletHasSufficientPID', 'nodelet has sufficient PID available'),
      cond('Ready', 'True', 'KubeletReady', 'ocm-lab nodelet is posting ready status'),
    ],
    addresses: [
      { type: 'InternalIP', address: o.node.address },
      { type: 'Hostname', address: o.node.nodeName },
    ],
    capacity: resources,
    allocatable: resources,
    daemonEndpoints: { kubeletEndpoint: { Port: o.kubeletPort } },
    nodeInfo: {
      machineID: '',
      systemUUID: '',
      bootID: '',
      kernelVersion: os.release(),
      osImage: `ocm-lab nodelet (${os.type()})`,
      containerRuntimeVersion: 'ocm-lab://process',
      kubeletVersion: o.version,
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: os.arch() === 'x64' ? 'amd64' : os.arch(),
    },
  };
}

/**
 * Registers the node and keeps it Ready: the Node object with its status,
 * and a Lease in kube-node-lease renewed every few seconds (the node
 * lifecycle controller marks a node NotReady when its lease expires).
 */
export class NodeAgent {
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private readySince = rfc3339(new Date());
  private uid = '';

  constructor(private readonly o: NodeAgentOptions) {}

  async register(): Promise<void> {
    const { client, node } = this.o;
    try {
      const created = await client.post<{ metadata: { uid: string } }>('/api/v1/nodes', nodeObject(this.o));
      this.uid = created.metadata.uid;
      this.o.log(`registered node ${node.nodeName}`);
    } catch (err) {
      if (!isStatus(err, 409)) throw err;
      const existing = await client.get<{
        metadata: { uid: string };
        status?: { conditions?: { type: string; status: string; lastTransitionTime?: string }[] };
      }>(`/api/v1/nodes/${node.nodeName}`);
      this.uid = existing.metadata.uid;
      const ready = existing.status?.conditions?.find((c) => c.type === 'Ready');
      if (ready?.status === 'True' && ready.lastTransitionTime) this.readySince = ready.lastTransitionTime;
    }
    await this.postStatus();
    await this.renewLease();
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    let lastStatus = Date.now();
    while (!this.abort.signal.aborted) {
      await sleep(this.o.renewIntervalMs, this.abort.signal);
      if (this.abort.signal.aborted) return;
      try {
        await this.renewLease();
        if (Date.now() - lastStatus >= this.o.statusIntervalMs) {
          await this.postStatus();
          lastStatus = Date.now();
        }
      } catch (err) {
        if (isStatus(err, 404) && /nodes/.test((err as Error).message)) {
          this.o.log('node object vanished; registering again');
          await this.register().catch((e: Error) => this.o.log(`register: ${e.message}`));
        } else {
          this.o.log(`heartbeat: ${(err as Error).message}`);
        }
      }
    }
  }

  private async postStatus(): Promise<void> {
    await this.o.client.mergePatch(`/api/v1/nodes/${this.o.node.nodeName}/status`, { status: nodeStatus(this.o, new Date(), this.readySince) });
  }

  private async renewLease(): Promise<void> {
    const name = this.o.node.nodeName;
    const path = `/apis/coordination.k8s.io/v1/namespaces/${LEASE_NAMESPACE}/leases/${name}`;
    const spec = { holderIdentity: name, leaseDurationSeconds: this.o.leaseDurationSeconds, renewTime: microTime(new Date()) };
    try {
      await this.o.client.mergePatch(path, { spec });
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
      await this.o.client.post(`/apis/coordination.k8s.io/v1/namespaces/${LEASE_NAMESPACE}/leases`, {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: {
          name,
          namespace: LEASE_NAMESPACE,
          ownerReferences: this.uid ? [{ apiVersion: 'v1', kind: 'Node', name, uid: this.uid }] : [],
        },
        spec,
      });
    }
  }
}
