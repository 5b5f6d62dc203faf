import type { CommandModule } from 'yargs';
import { disableAddon, enableAddon, knownAddon, listedAddons, spokeAdminClient } from '../../addons/enablement.js';
import { isDevAddon, removeDevAddon } from '../../addons/dev/remove.js';
import { addonBuildCommand } from './addon-build.js';
import { addonDevCommand } from './addon-dev.js';
import { addonNewCommand } from './addon-new.js';
import { hubClientFor } from '../../addons/hub-client.js';
import { addonStates } from '../../addons/install.js';
import { isBuiltinAddon } from '../../addons/registry.js';
import { spokeClusters } from '../../config/defaults.js';
import { loadLabConfig } from '../../config/load.js';
import { InvalidInputError } from '../../errors.js';
import { selectRuntime } from '../../runtime/registry.js';
import { emit, renderTable, type GlobalOptions } from '../output.js';

type ListArgs = GlobalOptions & { addon?: string[] };
type ToggleArgs = GlobalOptions & { name: string; cluster?: string[]; timeout: number };

const listCommand: CommandModule<GlobalOptions, ListArgs> = {
  command: 'list',
  describe: 'each addon on each managed cluster: installed and available (like clusteradm get addon)',
  builder: (y) => y.option('addon', { type: 'string', array: true, describe: 'only these addons' }),
  handler: async (argv) => {
    const config = await loadLabConfig(argv.config);
    const clusters = spokeClusters(config).map((c) => c.name);
    const hub = await hubClientFor(config);
    try {
      const addons = argv.addon?.length ? argv.addon : await listedAddons(hub, config.addons);
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

const toggleOptions = <T>(y: import('yargs').Argv<T>) =>
  y
    .positional('name', { type: 'string', demandOption: true, describe: 'the addon, e.g. helloworld' })
    .option('cluster', { type: 'string', array: true, describe: 'a managed cluster (repeatable); default: every managed cluster' })
    .option('timeout', { type: 'number', default: 180, describe: 'seconds to wait' });

function timeoutMs(seconds: number): number {
  if (!Number.isFinite(seconds) || seconds <= 0) throw new InvalidInputError(`--timeout ${seconds}: give a positive number of seconds`);
  return seconds * 1000;
}

const progressLine = (line: string) => process.stderr.write(`${line}\n`);

const enableCommand: CommandModule<GlobalOptions, ToggleArgs> = {
  command: 'enable <name>',
  describe: 'install an addon on managed clusters and wait until it is Available (like clusteradm addon enable)',
  builder: (y) => toggleOptions(y) as never,
  handler: async (argv) => {
    const addon = knownAddon(argv.name);
    const wait = timeoutMs(argv.timeout);
    const config = await loadLabConfig(argv.config);
    const hub = await hubClientFor(config);
    try {
      // The image up gave the lab's managers, as the runtime recorded it (existing clusters: --image-registry's copy).
      const labClusters = await (await selectRuntime('auto', { labName: config.name })).clusters(config);
      const result = await enableAddon(hub, {
        addon,
        spokes: spokeClusters(config).map((c) => c.name),
        clusters: argv.cluster,
        timeoutMs: wait,
        progress: progressLine,
        image: labClusters.find((c) => c.hub)?.ocmLabImage,
      });
      emit(argv, result, (r) =>
        renderTable(
          ['NAME', 'CLUSTER', 'AVAILABLE'],
          r.states.map((s) => [s.addon, s.cluster, s.available ? 'True' : 'False']),
        ),
      );
    } finally {
      hub.close();
    }
  },
};

const disableCommand: CommandModule<GlobalOptions, ToggleArgs> = {
  command: 'disable <name>',
  describe: 'remove an addon from managed clusters; its manager goes when no cluster has it left',
  builder: (y) => toggleOptions(y) as never,
  handler: async (argv) => {
    const wait = timeoutMs(argv.timeout);
    const config = await loadLabConfig(argv.config);
    const hub = await hubClientFor(config);
    try {
      // An addon loaded by `addon dev` is not one ocm-lab knows by name: it goes as a whole.
      if (!isBuiltinAddon(argv.name) && (await isDevAddon(hub, argv.name))) {
        const removed = await removeDevAddon(hub, argv.name, { timeoutMs: wait, progress: progressLine });
        emit(argv, { addon: argv.name, removed }, (r) => `${r.addon} (loaded by addon dev) removed from the hub and every cluster`);
        return;
      }
      const addon = knownAddon(argv.name);
      const result = await disableAddon(hub, {
        addon,
        spokes: spokeClusters(config).map((c) => c.name),
        clusters: argv.cluster,
        spokeClient: (cluster) => spokeAdminClient(config, cluster),
        timeoutMs: wait,
        progress: progressLine,
      });
      emit(
        argv,
        result,
        (r) =>
          `${r.addon} disabled on ${r.disabledOn.join(', ')}${r.managerRemoved ? `; no cluster has it left: manager and ClusterManagementAddOn removed` : ''}`,
      );
    } finally {
      hub.close();
    }
  },
};

/** `ocm-lab addon …`. */
export const addonCommand: CommandModule<GlobalOptions, GlobalOptions> = {
  command: 'addon <command>',
  describe: 'the lab addons (list, enable, disable), and your own (new, dev, build)',
  builder: (y) =>
    y
      .command(listCommand)
      .command(enableCommand)
      .command(disableCommand)
      .command(addonNewCommand)
      .command(addonDevCommand)
      .command(addonBuildCommand)
      .demandCommand(1, 'name an addon command: list, enable, disable, new, dev, build'),
  handler: () => undefined,
};
