import { execa } from 'execa';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OCM_LAB_IMAGE } from '../../src/images/catalogue.js';
import { downLab, upLab } from '../../src/lab/lifecycle.js';
import { labDir } from '../../src/paths.js';
import { OCM_VERSION } from '../../src/provision/versions.js';
import { OCM_API_MODULE, OCM_API_VERSION } from '../../src/ocm/api-module.js';
import { ensureGoModuleSource } from '../../src/provision/index.js';
import { chainName, interfacePrefix, netnsPrefixOf, ruleComment } from '../../src/runtime/local/network/index.js';
import { waitUntil } from '../support/wait.js';
import { followLogs, isolatedLabHome, kubectl, machineSnapshot, portForward, testLabConfig } from '../support/lab.js';

/** The pod model of the local runtime, seen only through kubectl and the API server, as a user sees it. */
const LAB = 'e2e-pods';
const config = testLabConfig(LAB, {
  vpcs: [{ name: 'vpc-1' }, { name: 'vpc-2' }],
  clusters: [
    { name: 'hub', vpc: 'vpc-1', hub: true },
    { name: 'cluster1', vpc: 'vpc-2', hub: false },
  ],
});
const NS = 'pods-e2e';

interface PodJson {
  metadata: { name: string };
  status: {
    phase: string;
    podIP?: string;
    hostIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { name: string; ready: boolean; restartCount: number; state: Record<string, { reason?: string; message?: string } | undefined> }[];
  };
}

/** Two replicas of one workload that serves /healthz on the same port, with a readiness probe, and prints a line a second. */
function echoManifests(ns: string, name: string, port: number): string {
  return `
apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: ${ns}}
spec:
  replicas: 2
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: main
        image: ${OCM_LAB_IMAGE}
        args: [internal, test-workload, --port, "${port}", --interval, 1s, --check, "list:configmaps"]
        ports: [{name: http, containerPort: ${port}}]
        readinessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 1}
        livenessProbe: {tcpSocket: {port: ${port}}, periodSeconds: 2}
---
apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: ${ns}}
spec:
  selector: {app: ${name}}
  ports: [{port: 80, targetPort: ${port}}]
`;
}

describe('pods on the local runtime: own network, real paths, kubelet API, probes, upstream images', () => {
  let home: Awaited<ReturnType<typeof isolatedLabHome>>;
  let kubeconfig: string;
  let before: Awaited<ReturnType<typeof machineSnapshot>>;
  const k = (context: string, args: string[], input?: string) => kubectl(kubeconfig, ['--context', context, ...args], input);
  const podsOf = async (context: string, selector: string, ns = NS): Promise<PodJson[]> => {
    const r = await k(context, ['-n', ns, 'get', 'pods', '-l', selector, '-o', 'json']);
    if (r.exitCode !== 0) throw new Error(r.stderr);
    return (JSON.parse(r.stdout) as { items: PodJson[] }).items;
  };
  const readyPods = async (context: string, selector: string, count: number, ns = NS) =>
    waitUntil(
      async () => {
        const pods = await podsOf(context, selector, ns);
        const ready = pods.filter((p) => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
        return ready.length === count ? ready : undefined;
      },
      `${count} Ready pods ${selector} on ${context}`,
      120_000,
    );
  /** A TCP connect from inside a pod (node is on every container's PATH): prints 'connected' or the error code. */
  const connectFrom = async (context: string, pod: string, host: string, port: number) =>
    k(context, [
      '-n',
      NS,
      'exec',
      pod,
      '--',
      'node',
      '-e',
      `const s=require('net').connect(${port},'${host}');s.setTimeout(3000,()=>{console.log('TIMEOUT');process.exit(0)});s.on('connect',()=>{console.log('connected');process.exit(0)});s.on('error',e=>{console.log(e.code);process.exit(0)})`,
    ]);

  beforeAll(async () => {
    home = await isolatedLabHome('pods');
    before = await machineSnapshot(home.home);
    const result = await upLab(config, { renderer: 'silent' });
    kubeconfig = result.status.kubeconfig ?? '';
    for (const cluster of ['hub', 'cluster1']) {
      expect((await k(cluster, ['create', 'namespace', NS])).exitCode).toBe(0);
      const applied = await k(cluster, ['apply', '-f', '-'], echoManifests(NS, 'echo', 8080));
      expect(applied.exitCode, applied.stderr).toBe(0);
    }
  });

  afterAll(async () => {
    await downLab(config).catch(() => undefined);
    await home.cleanup();
  });

  it('runs two pods listening on one port, both Ready, each with its own IP inside the VPC subnet', async () => {
    const pods = await readyPods('cluster1', 'app=echo', 2);
    const ips = pods.map((p) => p.status.podIP ?? '');
    expect(new Set(ips).size).toBe(2);
    for (const p of pods) {
      expect(p.status.podIP).not.toBe(p.status.hostIP);
      expect(p.status.podIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    }
  });

  it('kubectl exec runs a command in a pod and returns its exit code, stdout, stderr and stdin', async () => {
    const [pod] = await readyPods('cluster1', 'app=echo', 2);
    const r = await k('cluster1', ['-n', NS, 'exec', pod!.metadata.name, '--', 'sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stdout.trim()).toBe('out');
    expect(r.stderr).toContain('err');
    const withInput = await k('cluster1', ['-n', NS, 'exec', '-i', pod!.metadata.name, '--', 'cat'], 'hello through stdin\n');
    expect(withInput.exitCode, withInput.stderr).toBe(0);
    expect(withInput.stdout.trim()).toBe('hello through stdin');
    // The container sees its token at the path its spec names.
    const token = await k('cluster1', ['-n', NS, 'exec', pod!.metadata.name, '--', 'cat', '/var/run/secrets/kubernetes.io/serviceaccount/namespace']);
    expect(token.stdout).toBe(NS);
  });

  it('kubectl port-forward reaches a pod port from the host', async () => {
    const [pod] = await readyPods('cluster1', 'app=echo', 2);
    const forward = await portForward(kubeconfig, 'cluster1', NS, `pod/${pod!.metadata.name}`, 8080);
    try {
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`http://127.0.0.1:${forward.localPort}/healthz`);
        expect(res.status).toBe(200);
        expect((await res.text()).trim()).toBe('ok');
      }
    } finally {
      await forward.stop();
    }
  });

  it('kubectl logs: -f streams new lines; --tail, --timestamps, --since, --previous and -c', async () => {
    const [pod] = await readyPods('cluster1', 'app=echo', 2);
    const name = pod!.metadata.name;
    const tail = await k('cluster1', ['-n', NS, 'logs', name, '-c', 'main', '--tail', '2']);
    expect(tail.exitCode, tail.stderr).toBe(0);
    expect(tail.stdout.trim().split('\n')).toHaveLength(2);
    const stamped = await k('cluster1', ['-n', NS, 'logs', name, '--tail', '1', '--timestamps']);
    expect(stamped.stdout).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z /);
    // --since 2s leaves lines out only once the log has lines older than 2 s: a pod Ready a moment ago may have none yet.
    await waitUntil(
      async () => {
        const first = (await k('cluster1', ['-n', NS, 'logs', name, '--timestamps'])).stdout.split(' ')[0] ?? '';
        return Date.now() - Date.parse(first) > 3_000 ? true : undefined;
      },
      `a line of ${name} older than 3 s`,
      30_000,
    );
    const since = await k('cluster1', ['-n', NS, 'logs', name, '--since', '2s']);
    const all = await k('cluster1', ['-n', NS, 'logs', name]);
    expect(since.stdout.split('\n').length).toBeLessThan(all.stdout.split('\n').length);

    // The workload prints a line a second; the default ServiceAccount may not list ConfigMaps, so the line proves the in-pod credentials reached the API server.
    const lines = await followLogs(kubeconfig, 'cluster1', NS, name, /(list configmaps[^\n]*\n[^]*){2}/, undefined, 15_000);
    expect(lines).toMatch(/FORBIDDEN list configmaps -n pods-e2e: .*system:serviceaccount:pods-e2e:default/);
    const none = await k('cluster1', ['-n', NS, 'logs', name, '--previous']);
    expect(none.exitCode).not.toBe(0);
    expect(none.stderr).toMatch(/previous terminated container "main".*not found/);
  });

  it('keeps VPCs apart for pods: a hub pod cannot connect to a spoke pod, a spoke pod reaches the hub API server', async () => {
    const [hubPod] = await readyPods('hub', 'app=echo', 2);
    const [spokePod] = await readyPods('cluster1', 'app=echo', 2);
    const hubApi = new URL(JSON.parse((await k('hub', ['config', 'view', '--minify', '-o', 'json'])).stdout).clusters[0].cluster.server as string);
    const toHub = await connectFrom('cluster1', spokePod!.metadata.name, hubApi.hostname, Number(hubApi.port));
    expect(toHub.stdout.trim(), toHub.stderr).toBe('connected');
    // Positive control inside the spoke's own VPC first, so a failure below is the rule and not a broken pod.
    const [, otherSpokePod] = await readyPods('cluster1', 'app=echo', 2);
    const sameVpc = await connectFrom('cluster1', spokePod!.metadata.name, otherSpokePod!.status.podIP ?? '', 8080);
    expect(sameVpc.stdout.trim(), sameVpc.stderr).toBe('connected');
    const toSpoke = await connectFrom('hub', hubPod!.metadata.name, spokePod!.status.podIP ?? '', 8080);
    expect(toSpoke.exitCode, toSpoke.stderr).toBe(0);
    expect(toSpoke.stdout.trim()).not.toBe('connected');
  });

  it('Services with a ClusterIP work from pods, the kubernetes Service included', async () => {
    const [pod] = await readyPods('cluster1', 'app=echo', 2);
    const clusterIP = (await k('cluster1', ['-n', NS, 'get', 'service', 'echo', '-o', 'jsonpath={.spec.clusterIP}'])).stdout;
    const viaService = await connectFrom('cluster1', pod!.metadata.name, clusterIP, 80);
    expect(viaService.stdout.trim(), viaService.stderr).toBe('connected');
    const kubernetesIP = (await k('cluster1', ['-n', 'default', 'get', 'service', 'kubernetes', '-o', 'jsonpath={.spec.clusterIP}'])).stdout;
    const viaKubernetes = await connectFrom('cluster1', pod!.metadata.name, kubernetesIP, 443);
    expect(viaKubernetes.stdout.trim(), viaKubernetes.stderr).toBe('connected');
  });

  it('runs an upstream OCM image (the klusterlet operator) as a Deployment until Ready', async () => {
    const crd = await ocmKlusterletCrd();
    expect((await k('cluster1', ['apply', '-f', '-'], crd)).exitCode).toBe(0);
    const manifests = `
apiVersion: v1
kind: Namespace
metadata: {name: open-cluster-management}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: klusterlet, namespace: open-cluster-management}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: e2e-klusterlet-operator}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects: [{kind: ServiceAccount, name: klusterlet, namespace: open-cluster-management}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: klusterlet, namespace: open-cluster-management}
spec:
  replicas: 1
  selector: {matchLabels: {app: klusterlet}}
  template:
    metadata: {labels: {app: klusterlet}}
    spec:
      serviceAccountName: klusterlet
      containers:
      - name: klusterlet
        image: quay.io/open-cluster-management/registration-operator:${OCM_VERSION}
        args: ["/registration-operator", "klusterlet", "--disable-leader-election"]
        env: [{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
        livenessProbe: {httpGet: {path: /healthz, scheme: HTTPS, port: 8443}, initialDelaySeconds: 2, periodSeconds: 10}
        readinessProbe: {httpGet: {path: /healthz, scheme: HTTPS, port: 8443}, initialDelaySeconds: 2, periodSeconds: 2}
`;
    const applied = await k('cluster1', ['apply', '-f', '-'], manifests);
    expect(applied.exitCode, applied.stderr).toBe(0);
    await readyPods('cluster1', 'app=klusterlet', 1, 'open-cluster-management');
  });

  it('says why, with Events and status as the kubelet gives them, for bad pods', async () => {
    const bad = `
apiVersion: v1
kind: Pod
metadata: {name: unmapped-image, namespace: ${NS}}
spec: {containers: [{name: main, image: "quay.io/nobody/nothing:v9"}]}
---
apiVersion: v1
kind: Pod
metadata: {name: hostpath-volume, namespace: ${NS}}
spec:
  containers: [{name: main, image: ${OCM_LAB_IMAGE}, args: [internal, test-workload], volumeMounts: [{name: host, mountPath: /host}]}]
  volumes: [{name: host, hostPath: {path: /etc}}]
---
apiVersion: v1
kind: Pod
metadata: {name: failing-probe, namespace: ${NS}}
spec:
  containers:
  - name: main
    image: ${OCM_LAB_IMAGE}
    args: [internal, test-workload, --port, "8080"]
    readinessProbe: {httpGet: {path: /nothing-here, port: 8080}, periodSeconds: 1}
`;
    expect((await k('cluster1', ['apply', '-f', '-'], bad)).exitCode).toBe(0);
    // Events come one by one (Scheduled first): wait for the one that says why.
    const events = (pod: string, why: RegExp) =>
      waitUntil(
        async () => {
          const r = await k('cluster1', [
            '-n',
            NS,
            'get',
            'events',
            '--field-selector',
            `involvedObject.name=${pod}`,
            '-o',
            'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}',
          ]);
          return why.test(r.stdout) ? r.stdout : undefined;
        },
        `an event of ${pod} matching ${why}`,
        60_000,
      );
    expect(await events('unmapped-image', /quay\.io\/nobody\/nothing:v9/)).toMatch(/quay\.io\/nobody\/nothing:v9/);
    expect(await events('hostpath-volume', /hostPath/)).toMatch(/hostPath/);
    const probe = await events('failing-probe', /Unhealthy: Readiness probe failed: HTTP probe failed with statuscode: 404/);
    expect(probe).toContain('Unhealthy');
    const [notReady] = (await podsOf('cluster1', '')).filter((p) => p.metadata.name === 'failing-probe');
    expect(notReady?.status.containerStatuses?.[0]?.ready).toBe(false);

    // A hostNetwork pod whose port the node already uses (the nodelet's own kubelet API port).
    const taken = `
apiVersion: v1
kind: Pod
metadata: {name: host-port-taken, namespace: ${NS}}
spec:
  hostNetwork: true
  containers: [{name: main, image: ${OCM_LAB_IMAGE}, args: [internal, test-workload, --port, "10250"], ports: [{containerPort: 10250}]}]
`;
    expect((await k('cluster1', ['apply', '-f', '-'], taken)).exitCode).toBe(0);
    expect(await events('host-port-taken', /10250/)).toMatch(/10250/);
  });

  it('down removes every pod network namespace, container and rule, also after the nodelet was killed with SIGKILL', async () => {
    // The nodelet dies without stopping anything: its containers keep running under runc.
    const pidFile = path.join(labDir(LAB), 'clusters', 'cluster1', 'run', 'nodelet.pid');
    process.kill(Number.parseInt(await fs.readFile(pidFile, 'utf8'), 10), 'SIGKILL');
    const stillRunning = await execa('runc', ['--root', path.join(labDir(LAB), 'clusters', 'cluster1', 'nodelet', 'runc'), 'list', '-q']);
    expect(stillRunning.stdout.trim().split('\n').length).toBeGreaterThan(1);
    await downLab(config);
    // Only this lab's names: other labs may come and go on the machine meanwhile.
    const after = await machineSnapshot(home.home);
    const ours = (s: Awaited<ReturnType<typeof machineSnapshot>>) => ({
      netns: s.netns.filter((n) => n.startsWith(netnsPrefixOf(LAB))),
      links: s.links.filter((l) => l.startsWith(interfacePrefix(LAB))),
      rules: s.rules.filter((r) => r.includes(ruleComment(LAB)) || r.includes(chainName(LAB))),
    });
    expect(ours(after)).toEqual(ours(before));
    expect(ours(after)).toEqual({ netns: [], links: [], rules: [] });
    expect(after.processes).toEqual([]);
    const runc = await execa('sh', ['-c', `ps -eo args | grep -c "[r]unc --root ${home.home}" || true`]);
    expect(runc.stdout.trim()).toBe('0');
  });
});

async function ocmKlusterletCrd(): Promise<string> {
  const dir = await ensureGoModuleSource(OCM_API_MODULE, OCM_API_VERSION);
  return fs.readFile(path.join(dir, 'operator/v1/0000_00_operator.open-cluster-management.io_klusterlets.crd.yaml'), 'utf8');
}
