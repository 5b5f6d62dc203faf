import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { kubectl, kubectlPath } from './lab.js';
import type { TestLab } from './test-lab.js';
import { waitUntil } from './wait.js';

const MSA_NS = 'open-cluster-management-managed-serviceaccount';
const MSA = 'rotating';
/** The API server's shortest token is 10 minutes, so the agent's refresh (at 80 %) comes 8 minutes after the first token. */
const VALIDITY = '10m';
/** Longer than the rotation and the checks after it: the loop stops by itself even if nobody stops it. */
const LOOP_LIMIT_MS = 25 * 60_000;

export function rotationDir(lab: TestLab): string {
  return path.join(lab.home, 'rotation');
}

async function ok(lab: TestLab, context: string, args: string[], input?: string): Promise<string> {
  const r = await kubectl(lab.kubeconfig, ['--context', context, ...args], input);
  if (r.exitCode !== 0) throw new Error(`kubectl --context ${context} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

export async function rotatingToken(lab: TestLab): Promise<string | undefined> {
  const r = await kubectl(lab.kubeconfig, ['--context', 'hub', '-n', 'cluster1', 'get', 'secret', MSA, '-o', 'jsonpath={.data.token}']);
  return r.exitCode === 0 && r.stdout ? Buffer.from(r.stdout, 'base64').toString('utf8') : undefined;
}

/**
 * ManagedServiceAccount `rotating` on cluster1 with a 10-minute token, allowed to view cluster1, and a detached
 * loop (rotation-loop.mjs) sending one `proxy kubectl` a second as its user until a minute after the rotation (or
 * until told to stop). The first token
 * is kept in rotation/first-token (0600) for the check.
 */
export async function startRotationTraffic(lab: TestLab): Promise<void> {
  await ok(
    lab,
    'hub',
    ['apply', '-f', '-'],
    `apiVersion: authentication.open-cluster-management.io/v1beta1
kind: ManagedServiceAccount
metadata: {name: ${MSA}, namespace: cluster1}
spec:
  rotation: {enabled: true, validity: ${VALIDITY}}
`,
  );
  await ok(
    lab,
    'cluster1',
    ['apply', '-f', '-'],
    `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: rotating-view}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{kind: ServiceAccount, name: ${MSA}, namespace: ${MSA_NS}}]
`,
  );
  const first = await waitUntil(() => rotatingToken(lab), 'the first token of MSA rotating', 60_000);
  const dir = rotationDir(lab);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  await fs.writeFile(path.join(dir, 'first-token'), first, { mode: 0o600 });
  const child = spawn(
    process.execPath,
    [
      path.resolve('test/support/rotation-loop.mjs'),
      dir,
      String(Date.now() + LOOP_LIMIT_MS),
      path.resolve('dist/cli/main.js'),
      MSA,
      MSA_NS,
      'managed-serviceaccount-addon-agent',
      await kubectlPath(),
      lab.kubeconfig,
    ],
    { detached: true, stdio: 'ignore', env: { ...process.env, ...lab.env } },
  );
  child.unref();
  await fs.writeFile(path.join(dir, 'pid'), String(child.pid));
}

export interface RotationTraffic {
  runs: number;
  failures: string[];
  /** When each request ended (ms since the epoch). */
  times: number[];
}

interface RotationRun {
  run: number;
  at: number;
  ok: boolean;
  detail?: string;
}

async function rotationRuns(lab: TestLab): Promise<RotationRun[]> {
  const text = await fs.readFile(path.join(rotationDir(lab), 'runs.jsonl'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RotationRun);
}

/** Waits until `count` requests have ended after `since` (ms since the epoch), or the loop has stopped by itself. */
export async function awaitRequestsAfter(lab: TestLab, since: number, count: number): Promise<void> {
  await waitUntil(
    async () => {
      if ((await rotationRuns(lab)).filter((r) => r.at > since).length >= count) return true;
      return fs.access(path.join(rotationDir(lab), 'done')).then(
        () => true,
        () => undefined,
      );
    },
    `${count} requests of the rotation traffic after ${new Date(since).toISOString()}`,
    180_000,
    1_000,
  );
}

/** Stops the loop and waits until it has written its last line; what every request said. */
export async function stopRotationTraffic(lab: TestLab): Promise<RotationTraffic> {
  const dir = rotationDir(lab);
  await fs.writeFile(path.join(dir, 'stop'), '');
  await waitUntil(
    () =>
      fs.access(path.join(dir, 'done')).then(
        () => true,
        () => undefined,
      ),
    'the rotation loop to stop',
    90_000,
  );
  const runs = await rotationRuns(lab);
  return { runs: runs.length, failures: runs.filter((r) => !r.ok).map((r) => `run ${r.run}: ${r.detail ?? ''}`), times: runs.map((r) => r.at) };
}
