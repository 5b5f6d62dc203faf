import readline from 'node:readline';
import os from 'node:os';
import type { CommandModule } from 'yargs';
import { hubClientFor, hubPortForwarder } from '../../addons/hub-client.js';
import { openProxySession, runKubectl, withInterrupts, splitCommandLine, type ProxySession } from '../../addons/proxy-kubectl.js';
import { spokeClusters } from '../../config/defaults.js';
import { loadLabConfig } from '../../config/load.js';
import { InvalidInputError } from '../../errors.js';
import { ensureBinaries } from '../../provision/index.js';
import { emit, renderTable, type GlobalOptions } from '../output.js';

type HealthArgs = GlobalOptions & { cluster?: string[]; 'hub-kubeconfig'?: string };
type KubectlArgs = GlobalOptions & { cluster: string; sa: string; interactive: boolean; 'hub-kubeconfig'?: string; '--'?: string[]; args?: string[] };

const healthCommand: CommandModule<GlobalOptions, HealthArgs> = {
  command: 'health',
  describe: 'cluster-proxy on each cluster: installed, available, and a /healthz probe through the tunnel',
  builder: (y) =>
    y
      .option('cluster', { type: 'string', array: true, describe: 'only these clusters (default: every managed cluster of the lab)' })
      .option('hub-kubeconfig', { type: 'string', describe: 'act as this hub user (default: the lab admin)' }),
  handler: async (argv) => {
    const config = await loadLabConfig(argv.config);
    const clusters = argv.cluster?.length ? argv.cluster : spokeClusters(config).map((c) => c.name);
    const [{ hubTunnel }, { proxyHealth }] = await Promise.all([
      import('../../addons/cluster-proxy/hub-tunnel.js'),
      import('../../addons/cluster-proxy/health.js'),
    ]);
    const hub = await hubClientFor(config, argv['hub-kubeconfig']);
    const { client } = await hubTunnel(hub, { portForward: hubPortForwarder(config, argv['hub-kubeconfig']) });
    try {
      const rows = await proxyHealth(hub, client, clusters);
      emit(argv, rows, (r) =>
        renderTable(
          ['CLUSTER NAME', 'INSTALLED', 'AVAILABLE', 'PROBED HEALTH', 'LATENCY'],
          r.map((row) => [
            row.cluster,
            cap(row.installed),
            cap(row.available),
            cap(row.probedHealth),
            row.latencyMs === null ? '<none>' : `${row.latencyMs.toFixed(3)}ms`,
          ]),
        ),
      );
      const failed = rows.filter((r) => !r.probedHealth);
      if (failed.length) {
        for (const f of failed) process.stderr.write(`${f.cluster}: probe failed: ${f.error ?? 'unknown'}\n`);
        process.exitCode = 1;
      }
    } finally {
      client.close();
      hub.close();
    }
  },
};

const cap = (b: boolean) => (b ? 'True' : 'False');

async function interactive(kubectl: string, session: ProxySession, interrupt: AbortSignal): Promise<void> {
  process.stdout.write('Please enter the kubectl command and use "exit" to quit the interactive mode\n');
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout, prompt: 'kubectl> ', terminal: process.stdin.isTTY });
  interrupt.addEventListener('abort', () => rl.close(), { once: true });
  rl.prompt();
  for await (const line of rl) {
    const trimmed = line.trim();
    if (trimmed === 'exit' || trimmed === 'quit') break;
    if (trimmed) {
      try {
        await runKubectl(kubectl, session, splitCommandLine(trimmed), interrupt);
        if (interrupt.aborted) break;
      } catch (err) {
        process.stderr.write(`error: ${(err as Error).message}\n`);
      }
    }
    rl.prompt();
  }
  rl.close();
}

const kubectlCommand: CommandModule<GlobalOptions, KubectlArgs> = {
  command: 'kubectl',
  describe: "run kubectl against a managed cluster through cluster-proxy, with a ManagedServiceAccount's token",
  builder: (y) =>
    y
      .option('cluster', { type: 'string', demandOption: true, describe: 'managed cluster' })
      .option('sa', { type: 'string', demandOption: true, describe: 'ManagedServiceAccount in the cluster namespace whose token to use' })
      .option('interactive', { alias: 'i', type: 'boolean', default: false, describe: 'a kubectl> prompt; "exit" ends it' })
      .option('hub-kubeconfig', { type: 'string', describe: 'act as this hub user (default: the lab admin)' })
      .parserConfiguration({ 'populate--': true }),
  handler: async (argv) => {
    const args = (argv['--'] ?? []).map(String);
    if (!argv.interactive && args.length === 0)
      throw new InvalidInputError('give kubectl arguments after --, or -i for a prompt', {
        hint: 'e.g. ocm-lab proxy kubectl --cluster cluster1 --sa dep -- get deployments -A',
      });
    if (argv.interactive && args.length) throw new InvalidInputError('-i takes no kubectl arguments after --; type them at the prompt');
    const config = await loadLabConfig(argv.config);
    const { kubectl } = await ensureBinaries(['kubectl'], { kubernetesVersion: config.kubernetesVersion });
    const hub = await hubClientFor(config, argv['hub-kubeconfig']);
    // A Ctrl-C or SIGTERM ends kubectl, not us: the temporary kubeconfig with the token is always removed.
    const signal = await withInterrupts(async (interrupt) => {
      const session = await openProxySession(hub, argv.cluster, argv.sa, { portForward: hubPortForwarder(config, argv['hub-kubeconfig']) }).finally(() =>
        hub.close(),
      );
      try {
        if (interrupt.aborted) return;
        if (argv.interactive) await interactive(kubectl, session, interrupt);
        else {
          const code = await runKubectl(kubectl, session, args, interrupt);
          if (code !== 0) process.exitCode = code;
        }
      } finally {
        await session.close();
      }
    });
    if (signal) process.exitCode = 128 + (os.constants.signals[signal] ?? 0);
  },
};

/** `ocm-lab proxy …`: the cluster-proxy commands of clusteradm. */
export const proxyCommand: CommandModule<GlobalOptions, GlobalOptions> = {
  command: 'proxy <command>',
  describe: 'use cluster-proxy: health of the tunnels, kubectl through them',
  builder: (y) => y.command(healthCommand).command(kubectlCommand).demandCommand(1, 'name a proxy command: health or kubectl'),
  handler: () => undefined,
};
