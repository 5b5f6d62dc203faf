import fs from 'node:fs/promises';
import { execa } from 'execa';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LabConfig } from '../../src/config/index.js';
import { upLab } from '../../src/lab/lifecycle.js';
import { ExitCode } from '../../src/errors.js';
import { cli, cli as runCli, followLogs, kubectl, portForward } from '../support/lab.js';
import { useSharedLab } from '../support/test-lab.js';
import { waitUntil } from '../support/wait.js';
import { filesHolding, filesUnder, isCredentialFile, secretNeedles } from '../support/secret-scan.js';
import { labDir } from '../../src/paths.js';

const MSA_NS = 'open-cluster-management-managed-serviceaccount';
const PROXY_NS = 'open-cluster-management-cluster-proxy';

interface PodJson {
  metadata: { name: string };
  status: { containerStatuses?: { name: string; restartCount: number; ready: boolean; containerID?: string }[] };
}

/**
 * cluster-proxy and managed-serviceaccount on a real lab: installation by `up`,
 * token rotation under load, the MSA life cycle, recovery of a killed agent, and
 * the errors users meet.
 */
describe('addons: cluster-proxy, managed-serviceaccount and cluster-gateway on the default lab', () => {
  let home: { home: string };
  let config: LabConfig;
  let kubeconfig: string;
  let env: NodeJS.ProcessEnv;
  const k = (context: string, args: string[], input?: string) => kubectl(kubeconfig, ['--context', context, ...args], input);
  const ok = async (context: string, args: string[], input?: string) => {
    const r = await k(context, args, input);
    if (r.exitCode !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  /** true once `kubectl get` says NotFound; undefined while it exists; any other failure (refused, 403, …) throws (waitUntil names it at its deadline). */
  const gone = async (context: string, args: string[]) => {
    const r = await k(context, ['get', ...args]);
    if (r.exitCode === 0) return undefined;
    if (/\(NotFound\)| not found/.test(r.stderr)) return true;
    throw new Error(`kubectl --context ${context} get ${args.join(' ')} exited ${r.exitCode}, not with NotFound: ${r.stderr}`);
  };
  const msa = (name: string, ns: string, validity?: string) => `
apiVersion: authentication.open-cluster-management.io/v1beta1
kind: ManagedServiceAccount
metadata: {name: ${name}, namespace: ${ns}}
spec:
  rotation: {enabled: true${validity ? `, validity: ${validity}` : ''}}
`;
  const secretToken = async (name: string) => {
    const r = await k('hub', ['-n', 'cluster1', 'get', 'secret', name, '-o', 'jsonpath={.data.token}']);
    return r.exitCode === 0 && r.stdout ? Buffer.from(r.stdout, 'base64').toString('utf8') : undefined;
  };

  // Token rotation (a 10-minute token, rotated 8 minutes in) runs beside the other files on this shared lab:
  // its traffic starts with the lab (test/support/shared-shapes.ts), its check is test/e2e/msa-rotation.test.ts.
  const lab = useSharedLab('default', 'test/e2e/addons.test.ts');
  beforeAll(() => {
    ({ config, kubeconfig, env } = lab);
    home = { home: lab.home };
  });

  it('up installs both addons, Available on every managed cluster, and a second up changes nothing', async () => {
    const list = await cli(['addon', 'list', '-o', 'json'], env);
    expect(list.exitCode, list.stderr).toBe(0);
    const rows = JSON.parse(list.stdout) as { addon: string; cluster: string; installed: boolean; available: boolean }[];
    expect(rows.map((r) => `${r.addon}/${r.cluster}:${r.installed}:${r.available}`).sort()).toEqual([
      'cluster-gateway/cluster1:true:true',
      'cluster-gateway/cluster2:true:true',
      'cluster-proxy/cluster1:true:true',
      'cluster-proxy/cluster2:true:true',
      'managed-serviceaccount/cluster1:true:true',
      'managed-serviceaccount/cluster2:true:true',
    ]);
    const again = await upLab(config, { renderer: 'silent' });
    const addonSteps = again.steps.filter((s) => s.title === 'cluster-proxy' || s.title === 'managed-serviceaccount');
    expect(addonSteps.map((s) => s.result)).toEqual(['Available on cluster1, cluster2', 'Available on cluster1, cluster2']);
  });

  it('proxy health probes every cluster through its tunnel (text and -o json)', async () => {
    const text = await cli(['proxy', 'health'], env);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^CLUSTER NAME +INSTALLED +AVAILABLE +PROBED HEALTH +LATENCY$/m);
    expect(text.stdout).toMatch(/^cluster1 +True +True +True +[0-9.]+ms$/m);
    expect(text.stdout).toMatch(/^cluster2 +True +True +True +[0-9.]+ms$/m);
    const json = JSON.parse((await cli(['proxy', 'health', '--cluster', 'cluster2', '-o', 'json'], env)).stdout) as {
      cluster: string;
      probedHealth: boolean;
      latencyMs: number;
    }[];
    expect(json).toEqual([expect.objectContaining({ cluster: 'cluster2', installed: true, available: true, probedHealth: true })]);
    expect(json[0]!.latencyMs).toBeGreaterThan(0);
  });

  it('kubectl logs -f, exec and port-forward reach the addon pods through the API server, from the host', async () => {
    const proxyNs = 'open-cluster-management-cluster-proxy';
    // A new line in the agent's log: a ManagedServiceAccount for its cluster appears on the hub.
    const streamed = await followLogs(kubeconfig, 'cluster2', MSA_NS, 'deploy/managed-serviceaccount-addon-agent', /streamed: token issued/, () =>
      ok('hub', ['apply', '-f', '-'], msa('streamed', 'cluster2')),
    );
    expect(streamed).toMatch(/streamed: token issued for a new ServiceAccount/);
    // The shared lab is left as the test found it (test/support/test-lab.ts).
    await ok('hub', ['-n', 'cluster2', 'delete', 'managedserviceaccount', 'streamed']);
    await waitUntil(() => gone('cluster2', ['-n', MSA_NS, 'serviceaccount', 'streamed']), 'ServiceAccount streamed gone from cluster2', 60_000);

    const exec = await k('cluster1', ['-n', MSA_NS, 'exec', 'deploy/managed-serviceaccount-addon-agent', '--', 'sh', '-c', 'echo in-the-agent; exit 4']);
    expect(exec.exitCode, exec.stderr).toBe(4);
    expect(exec.stdout.trim()).toBe('in-the-agent');

    const forward = await portForward(kubeconfig, 'hub', proxyNs, 'deploy/cluster-proxy', 8092);
    try {
      const res = await fetch(`http://127.0.0.1:${forward.localPort}/healthz`);
      expect(res.status).toBe(200);
    } finally {
      await forward.stop();
    }
  });

  it('a deleted hub Secret is written again, with a token that works', async () => {
    await ok('hub', ['apply', '-f', '-'], msa('recreated', 'cluster1'));
    const first = await waitUntil(() => secretToken('recreated'), 'Secret recreated', 60_000);
    await ok('hub', ['-n', 'cluster1', 'delete', 'secret', 'recreated']);
    const second = await waitUntil(() => secretToken('recreated'), 'Secret recreated to come back', 60_000);
    expect(second).not.toBe(first);
    const review = JSON.parse(
      await ok(
        'cluster1',
        ['create', '-o', 'json', '-f', '-'],
        JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: second } }),
      ),
    ) as {
      status: { authenticated: boolean; user: { username: string } };
    };
    expect(review.status).toMatchObject({ authenticated: true, user: { username: `system:serviceaccount:${MSA_NS}:recreated` } });
  });

  it('deleting a ManagedServiceAccount removes its ServiceAccount on the cluster and its Secret on the hub', async () => {
    await waitUntil(() => secretToken('recreated'), 'Secret recreated', 60_000);
    await ok('cluster1', ['-n', MSA_NS, 'get', 'serviceaccount', 'recreated']);
    await ok('hub', ['-n', 'cluster1', 'delete', 'managedserviceaccount', 'recreated', '--wait=true']);
    await waitUntil(() => gone('cluster1', ['-n', MSA_NS, 'serviceaccount', 'recreated']), 'ServiceAccount recreated to go', 60_000);
    await waitUntil(() => gone('hub', ['-n', 'cluster1', 'secret', 'recreated']), 'Secret recreated to be collected', 60_000);
  });

  it('a ManagedServiceAccount with ttlSecondsAfterCreation is deleted when it runs out, with its ServiceAccount', async () => {
    await ok('hub', ['apply', '-f', '-'], `${msa('shortlived', 'cluster1')}  ttlSecondsAfterCreation: 20\n`);
    await waitUntil(() => secretToken('shortlived'), 'Secret shortlived', 60_000);
    await waitUntil(() => gone('hub', ['-n', 'cluster1', 'managedserviceaccount', 'shortlived']), 'MSA shortlived to be deleted', 60_000);
    await waitUntil(() => gone('cluster1', ['-n', MSA_NS, 'serviceaccount', 'shortlived']), 'ServiceAccount shortlived to go', 60_000);
  });

  it('a ManagedServiceAccount outside any cluster namespace gets a status that says so; nothing crashes', async () => {
    await ok('hub', ['create', 'namespace', 'not-a-cluster']);
    await ok('hub', ['apply', '-f', '-'], msa('lost', 'not-a-cluster'));
    const condition = await waitUntil(
      async () => {
        const out = await ok('hub', [
          '-n',
          'not-a-cluster',
          'get',
          'managedserviceaccount',
          'lost',
          '-o',
          'jsonpath={.status.conditions[?(@.type=="SecretCreated")]}',
        ]);
        return out ? (JSON.parse(out) as { status: string; reason: string; message: string }) : undefined;
      },
      'a SecretCreated condition on MSA lost',
      30_000,
    );
    expect(condition).toMatchObject({ status: 'False', reason: 'NotAManagedCluster' });
    expect(condition.message).toContain('namespace not-a-cluster is not the namespace of a managed cluster');
    const managers = JSON.parse(await ok('hub', ['-n', 'open-cluster-management-addon', 'get', 'pods', '-o', 'json'])) as { items: PodJson[] };
    for (const p of managers.items) expect(p.status.containerStatuses?.[0]?.restartCount, p.metadata.name).toBe(0);
    await ok('hub', ['delete', 'namespace', 'not-a-cluster', '--wait=false']);
  });

  it('a killed proxy-agent is restarted by the nodelet and proxy health recovers', async () => {
    const pods = JSON.parse(await ok('cluster2', ['-n', PROXY_NS, 'get', 'pods', '-o', 'json'])) as { items: PodJson[] };
    const status = pods.items[0]!.status.containerStatuses![0]!;
    const pid = Number(status.containerID!.replace('ocm-lab://', ''));
    process.kill(pid, 'SIGKILL');
    await waitUntil(
      async () => {
        const now = JSON.parse(await ok('cluster2', ['-n', PROXY_NS, 'get', 'pods', '-o', 'json'])) as { items: PodJson[] };
        const s = now.items[0]?.status.containerStatuses?.[0];
        return s && s.restartCount === status.restartCount + 1 && s.ready ? true : undefined;
      },
      'the proxy-agent to be restarted',
      60_000,
    );
    await waitUntil(
      async () => {
        const r = await cli(['proxy', 'health', '--cluster', 'cluster2'], env);
        return r.exitCode === 0 && /^cluster2 +True +True +True/m.test(r.stdout) ? true : undefined;
      },
      'proxy health of cluster2 to recover',
      60_000,
      1_000,
    );
  });

  it('proxy kubectl: unknown cluster or MSA exit 5 with a clear message; bad arguments exit 2; no temp files left', async () => {
    // A TMPDIR of its own: the rotation loop runs proxy kubectl at the same time.
    const tmp = path.join(home.home, 'tmp-proxy-kubectl');
    await fs.mkdir(tmp);
    const cli = (args: string[], e: NodeJS.ProcessEnv) => runCli(args, { ...e, TMPDIR: tmp });
    const noCluster = await cli(['proxy', 'kubectl', '--cluster', 'nowhere', '--sa', 'rotating', '--', 'get', 'pods'], env);
    expect(noCluster.exitCode).toBe(ExitCode.notFound);
    expect(noCluster.stderr).toContain("cluster 'nowhere' is not a managed cluster of this hub");
    const noMsa = await cli(['proxy', 'kubectl', '--cluster', 'cluster1', '--sa', 'nobody', '--', 'get', 'pods'], env);
    expect(noMsa.exitCode).toBe(ExitCode.notFound);
    expect(noMsa.stderr).toContain("no ManagedServiceAccount 'nobody' in namespace cluster1 on the hub");
    const noArgs = await cli(['proxy', 'kubectl', '--cluster', 'cluster1', '--sa', 'rotating'], env);
    expect(noArgs.exitCode).toBe(ExitCode.invalidInput);
    expect(noArgs.stderr).toContain('give kubectl arguments after --, or -i');
    const both = await cli(['proxy', 'kubectl', '--cluster', 'cluster1', '--sa', 'rotating', '-i', '--', 'get', 'pods'], env);
    expect(both.exitCode).toBe(ExitCode.invalidInput);
    const forbidden = await cli(['proxy', 'kubectl', '--cluster', 'cluster1', '--sa', 'rotating', '--', 'get', 'secrets', '-n', MSA_NS], env);
    expect(forbidden.exitCode).toBe(1);
    expect(forbidden.stderr).toContain('secrets is forbidden: User "system:serviceaccount:open-cluster-management-managed-serviceaccount:rotating"');
    const allowed = await cli(['proxy', 'kubectl', '--cluster', 'cluster1', '--sa', 'rotating', '--', 'get', 'deployments', '-n', MSA_NS], env);
    expect(allowed.exitCode, allowed.stderr).toBe(0);
    expect(await fs.readdir(tmp)).toEqual([]);

    // SIGINT (and SIGTERM) to ocm-lab while kubectl watches: kubectl is stopped, the kubeconfig with the token removed, exit 128+n.
    for (const [sig, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const) {
      const watching = execa(
        process.execPath,
        [
          path.resolve('dist/cli/main.js'),
          'proxy',
          'kubectl',
          '--cluster',
          'cluster1',
          '--sa',
          'rotating',
          '--',
          'get',
          'deployments',
          '-n',
          MSA_NS,
          '--watch',
        ],
        {
          reject: false,
          env: { ...process.env, CI: 'true', ...env, TMPDIR: tmp },
        },
      );
      let printed = '';
      watching.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
      await waitUntil(async () => ((await fs.readdir(tmp)).length ? true : undefined), `${sig}: proxy kubectl wrote its kubeconfig`, 30_000);
      await waitUntil(
        async () => (printed.includes('managed-serviceaccount-addon-agent') ? true : undefined),
        `${sig}: kubectl --watch printed the Deployment`,
        30_000,
        200,
      );
      watching.kill(sig);
      const r = await watching;
      expect(r.exitCode, `${sig}: ${String(r.stderr)}`).toBe(code);
      expect(await fs.readdir(tmp), sig).toEqual([]);
    }
  });

  it('no token or private key of the lab shows in any log file; every credential file of the lab is 0600, in a 0700 lab directory', async () => {
    const labDirectory = labDir(config.name);
    const secrets: string[] = [];
    // Every Secret's data on every cluster: ServiceAccount and MSA tokens, hub kubeconfigs, serving keys.
    for (const context of ['hub', 'cluster1', 'cluster2']) {
      const list = JSON.parse(await ok(context, ['get', 'secrets', '-A', '-o', 'json'])) as { items: { data?: Record<string, string> }[] };
      for (const item of list.items) {
        for (const [k, v] of Object.entries(item.data ?? {}))
          if (/token|key|kubeconfig|secret|password/i.test(k)) secrets.push(Buffer.from(v, 'base64').toString('utf8'));
      }
    }
    const files = await filesUnder(labDirectory);
    const credentialFiles: string[] = [];
    for (const f of files) if (!f.includes(`${path.sep}pods${path.sep}`) && (await isCredentialFile(f))) credentialFiles.push(f);
    for (const f of credentialFiles) secrets.push(await fs.readFile(f, 'utf8'));
    const needles = [...new Set(secrets.flatMap(secretNeedles))];
    expect(needles.length).toBeGreaterThan(50);
    // Logs: the control planes', the nodelets', every container's (the nodelet keeps them under the pod).
    const logs = files.filter((f) => f.endsWith('.log') || f.includes(`${path.sep}logs${path.sep}`));
    expect(logs.length).toBeGreaterThan(20);
    expect(await filesHolding(logs, needles)).toEqual([]);
    // The scan finds a token when one is there: the check itself can fail.
    expect((await filesHolding(credentialFiles.slice(0, 1), needles)).length).toBe(1);

    expect((await fs.stat(labDirectory)).mode & 0o777).toBe(0o700);
    // PKI keys, kubeconfigs with client keys or tokens, the nodelets' credentials, the lab kubeconfig.
    expect(credentialFiles.length).toBeGreaterThan(20);
    const loose = [];
    for (const f of credentialFiles) {
      const mode = (await fs.stat(f)).mode & 0o777;
      if (mode & 0o077) loose.push(`${path.relative(labDirectory, f)} ${mode.toString(8)}`);
    }
    expect(loose).toEqual([]);
  });
});
