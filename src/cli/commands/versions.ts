import type { CommandModule } from 'yargs';
import { KUBERNETES_RELEASES, OCM_RELEASES, OCM_VERSION, ocmOnKubernetesProblem } from '../../provision/index.js';
import { emit, renderTable, type GlobalOptions } from '../output.js';

interface OcmOnKubernetes {
  kubernetes: string;
  supported: boolean;
  /** Why not, where not. */
  reason?: string;
}

/** What `ocm-lab versions` lists: each Kubernetes release with what comes with it, each OCM release with the Kubernetes releases it runs on. */
function versionsTable() {
  const kubernetes = KUBERNETES_RELEASES.map((r, i) => ({
    kubernetes: r.kubernetes,
    default: i === 0,
    etcd: r.etcd,
    coredns: r.coredns,
    pause: r.pause,
    crictl: r.crictl,
  }));
  const ocm = OCM_RELEASES.map((r) => ({
    ocm: r.ocm,
    default: r.ocm === OCM_VERSION,
    api: r.api,
    kubernetesLibraries: r.kubernetesLibraries,
    runsOn: KUBERNETES_RELEASES.map((k): OcmOnKubernetes => {
      const reason = ocmOnKubernetesProblem(r.ocm, k.kubernetes);
      return reason ? { kubernetes: k.kubernetes, supported: false, reason } : { kubernetes: k.kubernetes, supported: true };
    }),
  }));
  return { kubernetes, ocm };
}

const marked = (version: string, isDefault: boolean) => `${version}${isDefault ? ' (default)' : ''}`;

function renderVersions(v: ReturnType<typeof versionsTable>): string {
  const kubernetes = renderTable(
    ['KUBERNETES', 'ETCD', 'KIND NODE IMAGE: COREDNS, PAUSE, CRICTL'],
    v.kubernetes.map((r) => [marked(r.kubernetes, r.default), r.etcd, `${r.coredns}, ${r.pause}, ${r.crictl}`]),
  );
  const ocm = renderTable(
    ['OCM', 'API, ADDON-FRAMEWORK', 'KUBERNETES LIBRARIES', 'RUNS ON KUBERNETES'],
    v.ocm.map((r) => [
      marked(r.ocm, r.default),
      r.api,
      r.kubernetesLibraries,
      r.runsOn
        .filter((k) => k.supported)
        .map((k) => k.kubernetes)
        .join(', '),
    ]),
  );
  const refused = v.ocm.flatMap((r) => r.runsOn.filter((k) => !k.supported).map((k) => `not OCM ${r.ocm} on Kubernetes ${k.kubernetes}: ${k.reason}`));
  return [kubernetes, ocm, ...(refused.length ? [refused.join('\n')] : [])].join('\n\n');
}

/** `ocm-lab versions`: the Kubernetes and OCM releases a lab can run (newest first, the defaults marked) and which run together. */
export const versionsCommand: CommandModule<GlobalOptions, GlobalOptions> = {
  command: 'versions',
  describe:
    'list the Kubernetes (--kubernetes-version, kubernetesVersion:) and OCM versions (--ocm-version, ocmVersion:) a lab can run, and which run together',
  handler: (argv) => emit(argv, versionsTable(), renderVersions),
};
