import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { defaultLabConfig, withVersionFlags, type AddonName, type LabConfig } from '../../src/config/index.js';
import { kubectlPortForward } from '../../src/kube/port-forward.js';
import { ensureBinaries } from '../../src/provision/index.js';

/** A lab home of its own for a test file, so tests never touch a user's labs. */
export async function isolatedLabHome(prefix: string): Promise<{ home: string; cleanup: () => Promise<void> }> {
  const home = await fs.mkdtemp(path.join(os.tmpdir(), `ocm-lab-${prefix}-`));
  const previous = process.env.OCM_LAB_HOME;
  process.env.OCM_LAB_HOME = home;
  return {
    home,
    cleanup: async () => {
      if (previous === undefined) delete process.env.OCM_LAB_HOME;
      else process.env.OCM_LAB_HOME = previous;
      await fs.rm(home, { recursive: true, force: true });
    },
  };
}

/**
 * The default lab as a test's, named `name`, without addons. $OCM_LAB_TEST_OCM_VERSION runs it on
 * another OCM release (a version or a minor, as --ocm-version takes), so an e2e file can be run per line.
 */
export function testLabConfig(name: string, overrides: Partial<LabConfig> = {}): LabConfig {
  // Addons only where a test asks for them: they add a minute and five processes to a lab.
  const base = withVersionFlags(defaultLabConfig(), { 'ocm-version': process.env.OCM_LAB_TEST_OCM_VERSION || undefined });
  return { ...base, addons: [], name, ...overrides };
}

/** The smallest lab most addon tests need: hub and cluster1 (in two VPCs) with `addons`. */
export function hubAndCluster1Config(name: string, addons: AddonName[]): LabConfig {
  return testLabConfig(name, {
    addons,
    clusters: [
      { name: 'hub', vpc: 'vpc-1', hub: true },
      { name: 'cluster1', vpc: 'vpc-2', hub: false },
    ],
  });
}

export async function kubectlPath(): Promise<string> {
  const found = await ensureBinaries(['kubectl']);
  const kubectl = found.kubectl;
  if (!kubectl) throw new Error('kubectl was not provisioned');
  return kubectl;
}

/** Runs the provisioned kubectl against the lab kubeconfig; never throws, returns what happened. */
export async function kubectl(kubeconfig: string, args: string[], input?: string): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const r = await execa(await kubectlPath(), ['--kubeconfig', kubeconfig, ...args], { reject: false, input, timeout: 60_000 });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** Runs the built CLI (dist/) the way a user would. */
export async function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const main = path.resolve('dist/cli/main.js');
  const r = await execa(process.execPath, [main, ...args], { reject: false, env: { ...process.env, CI: 'true', ...env }, timeout: 600_000 });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** `ocm-lab ui --config labFile` running in the background: the URL it printed, and a stop that waits for its exit. */
export async function startUi(labFile: string, env: NodeJS.ProcessEnv = {}): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = execa(process.execPath, [path.resolve('dist/cli/main.js'), 'ui', '--config', labFile], {
    reject: false,
    env: { ...process.env, CI: 'true', ...env },
  });
  const stop = async () => {
    child.kill('SIGTERM');
    await child;
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString('utf8');
        const found = /(http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)/.exec(out);
        if (found) resolve(found[1]!);
      });
      void child.then((r) => reject(new Error(`ocm-lab ui exited (${r.exitCode}) before it printed its URL: ${String(r.stdout)} ${String(r.stderr)}`)));
    });
    return { url, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** `ocm-lab up --runtime existing` on contexts of `kubeconfig`: the hub and each spoke, for the lab file `labFile`. */
export function upOnExisting(kubeconfig: string, hub: string, spokes: readonly string[], labFile: string, env: NodeJS.ProcessEnv = {}): ReturnType<typeof cli> {
  return cli(
    ['up', '--runtime', 'existing', '--kubeconfig', kubeconfig, '--hub-context', hub, ...spokes.flatMap((s) => ['--spoke-context', s]), '--config', labFile],
    env,
  );
}

/** What a lab can leave behind on the machine: compared before and after to prove `down` removes it all. */
export async function machineSnapshot(labHome: string): Promise<{ netns: string[]; links: string[]; rules: string[]; processes: string[] }> {
  const text = async (file: string, args: string[]) => String((await execa(file, args, { reject: false })).stdout);
  const netns = (await text('ip', ['netns', 'list'])).split('\n').filter(Boolean).sort();
  const links = (await text('ip', ['-o', 'link', 'show']))
    .split('\n')
    .map((l) => l.split(':')[1]?.trim().split('@')[0] ?? '')
    .filter(Boolean)
    .sort();
  const rules = (await text('iptables-save', []))
    .split('\n')
    .filter((l) => l && !l.startsWith('#') && !/^:\S+ \S+ \[\d+:\d+\]/.test(l))
    .map((l) => l.replace(/\[\d+:\d+\]/g, ''))
    .sort();
  const processes = (await text('ps', ['-eo', 'args']))
    .split('\n')
    .filter((l) => l.includes(labHome) && !l.includes('vitest'))
    .sort();
  return { netns, links, rules, processes };
}

/** `kubectl port-forward <target> :<port>` on a free local port; resolves once kubectl says where it listens. */
export async function portForward(
  kubeconfig: string,
  context: string,
  namespace: string,
  target: string,
  port: number,
): Promise<{ localPort: number; stop: () => Promise<void> }> {
  return kubectlPortForward({ kubectl: await kubectlPath(), kubeconfig, context, namespace, target, port });
}

/**
 * `kubectl logs -f` of `target` while `trigger` runs; resolves with what it streamed once `until` matches
 * (only lines written after it started count: --tail 0).
 */
export async function followLogs(
  kubeconfig: string,
  context: string,
  namespace: string,
  target: string,
  until: RegExp,
  trigger: () => Promise<unknown> = async () => undefined,
  timeoutMs = 30_000,
): Promise<string> {
  const child = execa(await kubectlPath(), ['--kubeconfig', kubeconfig, '--context', context, '-n', namespace, 'logs', '-f', '--tail', '0', target], {
    reject: false,
  });
  try {
    const streamed = new Promise<string>((resolve, reject) => {
      let seen = '';
      child.stdout?.on('data', (d: Buffer) => {
        seen += d.toString();
        if (until.test(seen)) resolve(seen);
      });
      child.stderr?.on('data', (d: Buffer) => (seen += d.toString()));
      setTimeout(() => reject(new Error(`kubectl logs -f ${target} printed ${JSON.stringify(seen)} in ${timeoutMs / 1000} s`)), timeoutMs);
    });
    // kubectl needs a moment to open the stream; lines written before that are not followed.
    await new Promise((r) => setTimeout(r, 1_000));
    await trigger();
    return await streamed;
  } finally {
    child.kill('SIGTERM');
    await child;
  }
}
