import type { CommandModule } from 'yargs';
import type { LabConfig } from '../../config/index.js';
import { loadLabConfig } from '../../config/load.js';
import { emit, type GlobalOptions } from '../output.js';

function describeValidLab(config: LabConfig): string {
  const what = `${config.clusters.length} clusters in ${config.vpcs.length} VPCs`;
  return config.source === null ? `lab file OK: ${what} (no --config: the built-in default lab)` : `lab file OK: ${what}`;
}

/** `ocm-lab validate [--config file]`: checks a lab file and creates nothing; -o json prints the normalised lab. */
export const validateCommand: CommandModule<GlobalOptions, GlobalOptions> = {
  command: 'validate',
  describe: 'check a lab file (--config) without creating anything',
  handler: async (argv) => {
    const config = await loadLabConfig(argv.config);
    emit(argv, config, describeValidLab);
  },
};
