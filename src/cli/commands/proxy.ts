import type { CommandModule } from 'yargs';
import { hubClientFor } from '../../addons/hub-client.js';
import { hubTunnelOptions } from '../../lab/hub-tunnel-options.js';
import { spokeClusters } from '../../config/defaults.js';
import { loadLabConfig } from '../../config/load.js';
import { emit, renderTable, type GlobalOptions } from '../output.js';
import { proxyKubectl } from './proxy-kubectl.js';

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
    const { client } = await hubTunnel(hub, await hubTunnelOptions(config, argv['hub-kubeconfig']));
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
  // Options as argv.ts's parseProxyKubectl reads them when main.ts takes the fast path.
  handler: (argv) =>
    proxyKubectl({
      config: argv.config,
      cluster: argv.cluster,
      sa: argv.sa,
      interactive: argv.interactive,
      hubKubeconfig: argv['hub-kubeconfig'],
      kubectlArgs: (argv['--'] ?? []).map(String),
    }),
};

/** `ocm-lab proxy …`: the cluster-proxy commands of clusteradm. */
export const proxyCommand: CommandModule<GlobalOptions, GlobalOptions> = {
  command: 'proxy <command>',
  describe: 'use cluster-proxy: health of the tunnels, kubectl through them',
  builder: (y) => y.command(healthCommand).command(kubectlCommand).demandCommand(1, 'name a proxy command: health or kubectl'),
  handler: () => undefined,
};
