import type { CommandModule } from 'yargs';
import { superviseLab } from '../../../runtime/local/supervisor.js';

/** `ocm-lab internal supervise`: one per local lab, started detached by `up`; restarts the lab's control planes and nodelets when they die. */
export const superviseCommand: CommandModule<object, { 'lab-dir': string }> = {
  command: 'supervise',
  describe: "restart a local lab's etcd, kube-apiserver, kube-controller-manager and nodelets when they die, with back-off",
  builder: (y) => y.option('lab-dir', { type: 'string', demandOption: true, describe: 'the lab directory (its run/supervised.json lists what to watch)' }),
  handler: async (argv) => {
    await superviseLab(argv['lab-dir']);
    // The components it started are its children still: do not wait for them.
    process.exit(0);
  },
};
