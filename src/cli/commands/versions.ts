import type { CommandModule } from 'yargs';
import { KUBERNETES_RELEASES, OCM_VERSION } from '../../provision/index.js';
import { emit, renderTable, type GlobalOptions } from '../output.js';

/** `ocm-lab versions`: the Kubernetes versions a lab can run (newest first, the default marked) and what comes with each. */
export const versionsCommand: CommandModule<GlobalOptions, GlobalOptions> = {
  command: 'versions',
  describe: 'list the Kubernetes versions a lab can run (--kubernetes-version, kubernetesVersion:) and the etcd and OCM each gets',
  handler: (argv) => {
    const rows = KUBERNETES_RELEASES.map((r, i) => ({
      kubernetes: r.kubernetes,
      default: i === 0,
      etcd: r.etcd,
      ocm: OCM_VERSION,
      coredns: r.coredns,
      pause: r.pause,
      crictl: r.crictl,
    }));
    emit(argv, rows, (list) =>
      renderTable(
        ['KUBERNETES', 'ETCD', 'OCM', 'KIND NODE IMAGE: COREDNS, PAUSE, CRICTL'],
        list.map((r) => [`${r.kubernetes}${r.default ? ' (default)' : ''}`, r.etcd, r.ocm, `${r.coredns}, ${r.pause}, ${r.crictl}`]),
      ),
    );
  },
};
