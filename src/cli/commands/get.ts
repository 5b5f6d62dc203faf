import type { CommandModule } from 'yargs';
import { loadLabConfig } from '../../config/load.js';
import { listManagedClusters, withHubClient } from '../../ocm/status.js';
import type { OcmStatus } from '../../ocm/status.js';
import { emit, renderTable, type GlobalOptions } from '../output.js';

const RESOURCES = ['clusters', 'managedclusters'] as const;
type Resource = (typeof RESOURCES)[number];

export function renderClusters(status: OcmStatus): string {
  if (!status.clusters.length) return 'No managed clusters.';
  const word = (b: boolean) => (b ? 'True' : 'False');
  return renderTable(
    ['NAME', 'HUB ACCEPTED', 'JOINED', 'AVAILABLE'],
    status.clusters.map((c) => [c.name, c.hubAccepted ? 'true' : 'false', word(c.joined), word(c.available)]),
  );
}

/** `ocm-lab get clusters`: the hub's ManagedClusters, like `kubectl get managedclusters`. */
export const getCommand: CommandModule<GlobalOptions, GlobalOptions & { resource: Resource }> = {
  command: 'get <resource>',
  describe: 'show OCM objects of the lab hub (clusters: the ManagedClusters)',
  builder: (y) => y.positional('resource', { choices: RESOURCES, demandOption: true, describe: 'what to list' }),
  handler: async (argv) => {
    const config = await loadLabConfig(argv.config);
    const status: OcmStatus = { clusters: await withHubClient(config, listManagedClusters) };
    emit(argv, status, renderClusters);
  },
};
