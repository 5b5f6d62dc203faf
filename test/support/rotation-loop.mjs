// Steady `ocm-lab proxy kubectl` traffic as a ManagedServiceAccount's user, one request a second, for the
// rotation test (test/support/msa-rotation.ts). Runs detached from the test file that starts it, so the
// wait for the rotation overlaps other files. Each request is one JSON line in <dir>/runs.jsonl. Bounded:
// it stops when <dir>/stop appears, on SIGTERM, at its deadline, or a minute after the MSA's token in the
// hub Secret differs from <dir>/first-token (the rotation has been crossed), whichever comes first.
// Usage: node rotation-loop.mjs <dir> <deadline ms since epoch> <cli main.js> <msa> <namespace> <expected> <kubectl> <kubeconfig>
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const [dir, deadline, main, sa, namespace, expected, kubectl, kubeconfig] = process.argv.slice(2);
const AFTER_ROTATION_MS = 60_000;
let running = true;
process.on('SIGTERM', () => (running = false));
const out = path.join(dir, 'runs.jsonl');
const first = fs.readFileSync(path.join(dir, 'first-token'), 'utf8');
const exec = (file, args) =>
  new Promise((resolve) => {
    execFile(file, args, { env: { ...process.env, CI: 'true' }, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (error.code ?? -1) : 0, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
const request = () =>
  exec(process.execPath, [main, 'proxy', 'kubectl', '--cluster', 'cluster1', '--sa', sa, '--', 'get', 'deployments', '-n', namespace, '-o', 'name']);
const rotated = async () => {
  const r = await exec(kubectl, ['--kubeconfig', kubeconfig, '--context', 'hub', '-n', 'cluster1', 'get', 'secret', sa, '-o', 'jsonpath={.data.token}']);
  return r.code === 0 && r.stdout !== '' && Buffer.from(r.stdout, 'base64').toString('utf8') !== first;
};
let n = 0;
let rotatedAt = 0;
while (running && Date.now() < Number(deadline) && !fs.existsSync(path.join(dir, 'stop'))) {
  if (rotatedAt && Date.now() - rotatedAt > AFTER_ROTATION_MS) break;
  const r = await request();
  n++;
  const ok = r.code === 0 && r.stdout.includes(expected);
  fs.appendFileSync(out, JSON.stringify({ run: n, at: Date.now(), ok, ...(ok ? {} : { detail: `exit ${r.code}: ${r.stderr.trim().slice(0, 300)}` }) }) + '\n');
  if (!rotatedAt && n % 5 === 0 && (await rotated())) rotatedAt = Date.now();
  await new Promise((res) => setTimeout(res, 1_000));
}
fs.writeFileSync(path.join(dir, 'done'), String(n));
