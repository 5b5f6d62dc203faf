import type { CommandModule } from 'yargs';
import { hubClientFor } from '../../addons/hub-client.js';
import { addonStates, LAB_ADDONS } from '../../addons/install.js';
import { loadLabConfig, spokeClusters } from '../../config/index.js';
import { emit, renderTable, type GlobalOptions } from '../output.js';

type ListArgs = GlobalOptions & { addon?: string[] };

const listCommand: CommandModule<GlobalOptions, ListArgs> = {
  command: 'list',
  describe: 'each addon on each managed cluster: installed and available (like clusteradm get addon)',
  builder: (y) => y.option('addon', { type: 'string', array: true, describe: 'only these addons' }),
  handler: async (argv) => {
    const config = await loadLabConfig(argv.config);
    const addons = argv.addon?.length ? argv.addon : LAB_ADDONS.filter((a) => (config.addons as string[]).includes(a));
    const clusters = spokeClusters(config).map((c) => c.name);
    const hub = await hubClientFor(config);
    try {
      const rows = (await Promise.all(addons.map((a) => addonStates(hub, a, clusters)))).flat();
      emit(argv, rows, (r) =>
        renderTable(
          ['NAME', 'CLUSTER', 'INSTALLED', 'AVAILABLE'],
          r.map((s) => [s.addon, s.cluster, s.installed ? 'True' : 'False', s.available ? 'True' : 'False']),
        ),
      );
    } finally {
      hub.close();
    }
  },
};

/** `ocm-lab addon …`. */
export const addonCommand: CommandModule<GlobalOptions, GlobalOptions> = {
  command: 'addon <command>',
  describe: 'the lab addons (list)',
  builder: (y) => y.command(listCommand).demandCommand(1, 'name an addon command: list'),
  handler: () => undefined,
};
