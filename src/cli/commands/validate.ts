import type { CommandModule } from 'yargs';
import { loadLabConfig } from '../../config/index.js';
import { emit, type GlobalOptions } from '../output.js';

export const validateCommand: CommandModule<GlobalOptions, GlobalOptions> = {
  command: 'validate',
  describe: 'check a lab file (--config) without creating anything',
  handler: async (argv) => {
    const config = await loadLabConfig(argv.config);
    emit(argv, config, (c) => `lab file OK: lab '${c.name}', ${c.clusters.length} clusters in ${c.vpcs.length} VPCs, hub ${c.clusters.find((x) => x.hub)?.name ?? '?'}`);
  },
};
