import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OCM_LAB_IMAGE } from '../../src/images/catalogue.js';
import { renderLabConfig } from '../../src/config/index.js';
import { downLab, labStatus, upLab } from '../../src/lab/lifecycle.js';
import { labDir } from '../../src/paths.js';
import { alive, cmdline } from '../support/process.js';
import { waitUntil } from '../support/wait.js';
import { cli, isolatedLabHome, kubectl, testLabConfig } from '../support/lab.js';

const LAB = 'e2e-nodelet';
const config = testLabConfig(LAB);
const NS = 'nodelet-e2e';

interface PodJson {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  spec: { nodeName?: string };
  status: {
    phase: string;
    podIP?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    containerStatuses?: { name: string; restartCount: number; ready: boolean; containerID?: string; state: Record<string, unknown> }[];
  };
}

const pidOf = (pod: PodJson, container = 'main') =>
  Number((pod.status.containerStatuses?.find((c) => c.name === container)?.containerID ?? '').replace('ocm-lab://', ''));

/** A Deployment of our image running the built-in test workload with in-pod credentials. */
function workloadManifests(ns: string): string {
  return `
apiVersion: v1
kind: ServiceAccount
metadata: {name: reader, namespace: ${ns}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: configmap-reader, namespace: ${ns}}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader, namespace: ${ns}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: configmap-reader}
subjects: [{kind: ServiceAccount, name: reader, namespace: ${ns}}]
---
apiVersion: v1
kind: Secret
metadata: {name: db, namespace: ${ns}}
stringData: {password: hunter2}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: ${ns}}
data: {color: blue}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: probe, namespace: ${ns}}
spec:
  replicas: 1
  selector: {matchLabels: {app: probe}}
  template:
    metadata: {labels: {app: probe}}
    spec:
      serviceAccountName: reader
      terminationGracePeriodSeconds: 5
      containers:
      - name: main
        image: ${OCM_LAB_IMAGE}
        args: [internal, test-workload, --check, "list:configmaps", --check, "list:secrets", --port, "18080",
               --print-env, POD_NAME, --print-env, PASSWORD, --print-env, COLOR, --print-env, POD_IP,
               --print-file, /var/run/secrets/kubernetes.io/serviceaccount/namespace, --print-file, /etc/settings/color]
        env:
        - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
        - {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
        - {name: PASSWORD, valueFrom: {secretKeyRef: {name: db, key: password}}}
        - {name: COLOR, valueFrom: {configMapKeyRef: {name: settings, key: color}}}
        volumeMounts: [{name: settings, mountPath: /etc/settings}]
      volumes: [{name: settings, configMap: {name: settings}}]
`;
}

describe('nodelet: Deployments of the ocm-lab image become real processes', () => {
  let home: Awaited<ReturnType<typeof isolatedLabHome>>;
  let kubeconfig: string;
  let labFile: string;
  const k = (context: string, args: string[], input?: string) => kubectl(kubeconfig, ['--context', context, ...args], input);
  const pods = async (context: string, ns: string, selector: string): Promise<PodJson[]> => {
    const r = await k(context, ['-n', ns, 'get', 'pods', '-l', selector, '-o', 'json']);
    if (r.exitCode !== 0) throw new Error(r.stderr);
    return (JSON.parse(r.stdout) as { items: PodJson[] }).items;
  };
  const readyReplicas = async (context: string, ns: string, name: string) =>
    (await k(context, ['-n', ns, 'get', 'deployment', name, '-o', 'jsonpath={.status.readyReplicas}'])).stdout;

  beforeAll(async () => {
    home = await isolatedLabHome('nodelet');
    const result = await upLab(config, { renderer: 'silent' });
    kubeconfig = result.status.kubeconfig ?? '';
    labFile = path.join(home.home, 'lab.yaml');
    await fs.writeFile(labFile, renderLabConfig(config));
  });

  afterAll(async () => {
    await downLab(config).catch(() => undefined);
    await home.cleanup();
  });

  it('registers a Ready node per cluster, the hub included', async () => {
    for (const cluster of ['hub', 'cluster1', 'cluster2']) {
      const r = await k(cluster, ['get', 'node', `${cluster}-nodelet`, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']);
      expect(r.stdout, r.stderr).toBe('True');
    }
    expect((await labStatus(config)).capabilities).toContain('pods');
  });

  it('runs a Deployment to READY 1/1 as a real process with env, volumes and an RBAC-bound token', async () => {
    expect((await k('cluster1', ['create', 'namespace', NS])).exitCode).toBe(0);
    const applied = await k('cluster1', ['apply', '-f', '-'], workloadManifests(NS));
    expect(applied.exitCode, applied.stderr).toBe(0);
    await waitUntil(async () => ((await readyReplicas('cluster1', NS, 'probe')) === '1' ? true : undefined), 'Deployment probe READY 1/1');
    const [pod] = await pods('cluster1', NS, 'app=probe');
    expect(pod?.spec.nodeName).toBe('cluster1-nodelet');
    expect(pod?.status.phase).toBe('Running');
    const pid = pidOf(pod!);
    expect(alive(pid)).toBe(true);
    expect(await cmdline(pid)).toContain('internal test-workload --check list:configmaps');

    // What the process printed, through `ocm-lab logs`.
    const podName = pod!.metadata.name;
    const logs = await waitUntil(async () => {
      const r = await cli(['logs', 'cluster1', `${NS}/${podName}`, '--config', labFile], { OCM_LAB_HOME: home.home });
      return r.exitCode === 0 && r.stdout.includes('serving /healthz') ? r.stdout : undefined;
    }, 'the workload to report its checks');
    expect(logs).toContain(`ENV POD_NAME=${podName}`);
    expect(logs).toContain('ENV PASSWORD=hunter2');
    expect(logs).toContain('ENV COLOR=blue');
    expect(logs).toContain(`ENV POD_IP=${pod!.status.podIP}`);
    expect(logs).toContain(`FILE /var/run/secrets/kubernetes.io/serviceaccount/namespace: ${NS}`);
    expect(logs).toContain('FILE /etc/settings/color: blue');
    expect(logs).toMatch(new RegExp(`^ALLOWED list configmaps -n ${NS} \\(\\d+ items\\)$`, 'm'));
    expect(logs).toContain(
      `FORBIDDEN list secrets -n ${NS}: GET /api/v1/namespaces/${NS}/secrets: 403 Forbidden: secrets is forbidden: User "system:serviceaccount:${NS}:reader"`,
    );

    // The token it got is a credential file.
    const volumes = path.join(labDir(LAB), 'clusters', 'cluster1', 'nodelet', 'pods', `${NS}_${podName}_${pod!.metadata.uid}`, 'volumes');
    const [tokenVolume] = (await fs.readdir(volumes)).filter((v) => v.startsWith('kube-api-access-'));
    expect((await fs.stat(path.join(volumes, tokenVolume!, 'token'))).mode & 0o777).toBe(0o600);
  });

  it('restarts a killed process (restartCount 1) and keeps the previous log', async () => {
    const [before] = await pods('cluster1', NS, 'app=probe');
    const oldPid = pidOf(before!);
    process.kill(oldPid, 'SIGKILL');
    const after = await waitUntil(async () => {
      const [p] = await pods('cluster1', NS, 'app=probe');
      const s = p?.status.containerStatuses?.[0];
      return s && s.restartCount === 1 && s.ready ? p : undefined;
    }, 'the container to be restarted and ready again');
    const newPid = pidOf(after);
    expect(newPid).not.toBe(oldPid);
    expect(alive(newPid)).toBe(true);
    expect(after.status.containerStatuses?.[0]?.state).toHaveProperty('running');
    const previous = await cli(['logs', 'cluster1', `${NS}/${after.metadata.name}`, '--previous', '--container', 'main', '--config', labFile], {
      OCM_LAB_HOME: home.home,
    });
    expect(previous.exitCode, previous.stderr).toBe(0);
    // Each run is pid 1 of its own pid namespace.
    expect(previous.stdout).toContain('test-workload pid 1 started');
    expect(previous.stdout).toContain('serving /healthz');
  });

  it('a SIGKILLed nodelet: up starts it again and it adopts the running container (same pid, no restart); the adopted run’s output and exit still reach the pod', async () => {
    const [before] = await pods('cluster1', NS, 'app=probe');
    const pid = pidOf(before!);
    const restarts = before!.status.containerStatuses![0]!.restartCount;
    const clusterDir = path.join(labDir(LAB), 'clusters', 'cluster1');
    const nodeletPid = Number((await fs.readFile(path.join(clusterDir, 'run', 'nodelet.pid'), 'utf8')).trim());
    process.kill(nodeletPid, 'SIGKILL');
    await waitUntil(async () => (!alive(nodeletPid) ? true : undefined), 'the nodelet to be gone', 10_000, 20);
    expect(alive(pid), 'the container outlives its nodelet').toBe(true);

    await upLab(config, { renderer: 'silent' });
    const newNodelet = Number((await fs.readFile(path.join(clusterDir, 'run', 'nodelet.pid'), 'utf8')).trim());
    expect(newNodelet).not.toBe(nodeletPid);
    const nodeletLog = await waitUntil(async () => {
      const text = await fs.readFile(path.join(clusterDir, 'logs', 'nodelet.log'), 'utf8').catch(() => '');
      const since = text.slice(text.lastIndexOf('\n==== '));
      return since.includes(`${NS}/${before!.metadata.name}: adopted running containers`) ? since : undefined;
    }, 'the new nodelet to adopt the container');
    expect(nodeletLog).not.toContain(`${NS}/${before!.metadata.name}: removed containers`);
    const adopted = await waitUntil(async () => {
      const [p] = await pods('cluster1', NS, 'app=probe');
      const s = p?.status.containerStatuses?.[0];
      return s?.ready ? p : undefined;
    }, 'the adopted container to be ready');
    expect(pidOf(adopted)).toBe(pid);
    expect(adopted.status.containerStatuses?.[0]?.restartCount).toBe(restarts);

    // The new nodelet sees what the adopted run prints and how it ends: SIGTERM, "received SIGTERM", exit 0, restarted.
    process.kill(pid, 'SIGTERM');
    const after = await waitUntil(async () => {
      const [p] = await pods('cluster1', NS, 'app=probe');
      const s = p?.status.containerStatuses?.[0];
      return s && s.restartCount === restarts + 1 && s.ready ? p : undefined;
    }, 'the adopted container’s exit to be seen and the container restarted');
    const last = after.status.containerStatuses![0]! as { lastState?: { terminated?: { exitCode: number } } };
    expect(last.lastState?.terminated?.exitCode).toBe(0);
    const previous = await cli(['logs', 'cluster1', `${NS}/${after.metadata.name}`, '--previous', '--container', 'main', '--config', labFile], {
      OCM_LAB_HOME: home.home,
    });
    expect(previous.exitCode, previous.stderr).toBe(0);
    expect(previous.stdout).toContain('serving /healthz');
    expect(previous.stdout).toContain('received SIGTERM, exiting');
  });

  it('stops the process and removes the pod when the Deployment is deleted', async () => {
    const [pod] = await pods('cluster1', NS, 'app=probe');
    const pid = pidOf(pod!);
    expect((await k('cluster1', ['-n', NS, 'delete', 'deployment', 'probe'])).exitCode).toBe(0);
    await waitUntil(async () => ((await pods('cluster1', NS, 'app=probe')).length === 0 ? true : undefined), 'the pod to be gone');
    await waitUntil(async () => (alive(pid) ? undefined : true), `process ${pid} to exit`);
    const gone = await cli(['logs', 'cluster1', `${NS}/${pod!.metadata.name}`, '--config', labFile], { OCM_LAB_HOME: home.home });
    expect(gone.exitCode).toBe(5);
  });

  it('leaves a pod of another image Pending with an Event that says why', async () => {
    expect((await k('cluster1', ['-n', NS, 'create', 'deployment', 'foreign', '--image=nginx:1.27'])).exitCode).toBe(0);
    const event = await waitUntil(async () => {
      const r = await k('cluster1', ['-n', NS, 'get', 'events', '--field-selector', 'reason=FailedScheduling', '-o', 'jsonpath={.items[*].message}']);
      return r.stdout.includes('nginx:1.27') ? r.stdout : undefined;
    }, 'a FailedScheduling event');
    expect(event).toContain(
      `node cluster1-nodelet is an ocm-lab nodelet, which runs only the images ${OCM_LAB_IMAGE}, quay.io/open-cluster-management/registration-operator:v1.2.1`,
    );
    expect(event).toContain('; container nginx (nginx:1.27)');
    const [pod] = await pods('cluster1', NS, 'app=foreign');
    expect(pod?.status.phase).toBe('Pending');
    expect(pod?.spec.nodeName).toBeUndefined();
    expect(pod?.status.conditions?.find((c) => c.type === 'PodScheduled')).toMatchObject({ status: 'False', reason: 'Unschedulable' });
  });

  it('rejects logs of unknown clusters and pods with exit 5', async () => {
    const cluster = await cli(['logs', 'cluster9', `${NS}/x`, '--config', labFile], { OCM_LAB_HOME: home.home });
    expect(cluster.exitCode).toBe(5);
    expect(cluster.stderr).toContain("lab 'e2e-nodelet' has no cluster 'cluster9'");
    const pod = await cli(['logs', 'cluster1', `${NS}/nope`, '--config', labFile], { OCM_LAB_HOME: home.home });
    expect(pod.exitCode).toBe(5);
    expect(pod.stderr).toContain(`pod ${NS}/nope does not exist on cluster cluster1`);
    const bad = await cli(['logs', 'cluster1', 'no-slash', '--config', labFile], { OCM_LAB_HOME: home.home });
    expect(bad.exitCode).toBe(2);
  });

  it('runs a Deployment delivered by a ManifestWork on cluster1, and removes it with the work', async () => {
    const work = {
      apiVersion: 'work.open-cluster-management.io/v1',
      kind: 'ManifestWork',
      metadata: { name: 'nodelet-delivered', namespace: 'cluster1' },
      spec: {
        workload: {
          manifests: [
            { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'delivered' } },
            {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              metadata: { name: 'delivered', namespace: 'delivered' },
              spec: {
                replicas: 1,
                selector: { matchLabels: { app: 'delivered' } },
                template: {
                  metadata: { labels: { app: 'delivered' } },
                  spec: { terminationGracePeriodSeconds: 5, containers: [{ name: 'main', image: OCM_LAB_IMAGE, args: ['internal', 'test-workload'] }] },
                },
              },
            },
          ],
        },
      },
    };
    const created = await k('hub', ['create', '-f', '-'], JSON.stringify(work));
    expect(created.exitCode, created.stderr).toBe(0);
    await waitUntil(
      async () => ((await readyReplicas('cluster1', 'delivered', 'delivered')) === '1' ? true : undefined),
      'delivered Deployment READY 1/1 on cluster1',
    );
    const [pod] = await pods('cluster1', 'delivered', 'app=delivered');
    const pid = pidOf(pod!);
    expect(await cmdline(pid)).toContain('internal test-workload');
    expect((await k('hub', ['-n', 'cluster1', 'delete', 'manifestwork', 'nodelet-delivered'])).exitCode).toBe(0);
    await waitUntil(
      async () => ((await k('cluster1', ['get', 'namespace', 'delivered'])).exitCode !== 0 ? true : undefined),
      'the delivered namespace to be removed',
      120_000,
    );
    await waitUntil(async () => (alive(pid) ? undefined : true), `delivered process ${pid} to exit`);
  });

  it('down stops every nodelet and container process', async () => {
    expect((await k('cluster2', ['create', 'namespace', NS])).exitCode).toBe(0);
    const applied = await k('cluster2', ['apply', '-f', '-'], workloadManifests(NS));
    expect(applied.exitCode, applied.stderr).toBe(0);
    await waitUntil(async () => ((await readyReplicas('cluster2', NS, 'probe')) === '1' ? true : undefined), 'Deployment probe READY on cluster2');
    const [pod] = await pods('cluster2', NS, 'app=probe');
    const containerPid = pidOf(pod!);
    const nodeletPids = await Promise.all(
      ['hub', 'cluster1', 'cluster2'].map(async (c) => Number((await fs.readFile(path.join(labDir(LAB), 'clusters', c, 'run', 'nodelet.pid'), 'utf8')).trim())),
    );
    expect([containerPid, ...nodeletPids].every(alive)).toBe(true);
    const result = await downLab(config);
    expect(result.removed).toEqual(expect.arrayContaining(['hub/nodelet', 'cluster1/nodelet', 'cluster2/nodelet']));
    expect([containerPid, ...nodeletPids].filter(alive)).toEqual([]);
    await expect(fs.access(labDir(LAB))).rejects.toThrow();
  });
});
