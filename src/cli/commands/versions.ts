import type { CommandModule } from 'yargs';
import { builtNodeVerdict, localVerdict, officialNodeVerdict, type HostFacts, type Verdict } from '../../provision/host-support.js';
import { KIND_VERSION, KUBERNETES_RELEASES, OCM_VERSION } from '../../provision/index.js';
import { minorOf, officialNodeImage } from '../../provision/versions.js';
import { emit, renderTable, type GlobalOptions } from '../output.js';
import { readHostFacts } from './artifacts-options.js';

function verdictText(v: Verdict): string {
  return v.ok ? 'yes' : `no: ${v.why}`;
}

function hostLine(facts: HostFacts): string {
  const docker = facts.docker.available ? 'Docker answers' : `Docker does not answer${facts.docker.reason ? ` (${facts.docker.reason})` : ''}`;
  return `this machine: ${facts.platform}, cgroup ${facts.cgroupV2 ? 'v2' : 'v1'}, ${docker}, ${facts.root ? 'root' : 'not root'}`;
}

/**
 * `ocm-lab versions`: per Kubernetes minor a lab can run (newest first, the default marked), the patch
 * each source gives (built here and dl.k8s.io; kind's published node image, by digest, paired with the
 * pinned kind release), what comes with it, and which this machine can run and why not.
 */
export const versionsCommand: CommandModule<GlobalOptions, GlobalOptions> = {
  command: 'versions',
  describe: 'list the Kubernetes versions a lab can run (kubernetesVersion:, --kubernetes-version), the patch each source gives, and what this machine can run',
  handler: async (argv) => {
    const facts = await readHostFacts();
    const rows = KUBERNETES_RELEASES.map((r, i) => {
      const official = officialNodeImage(r.kubernetes);
      return {
        minor: minorOf(r.kubernetes),
        kubernetes: r.kubernetes,
        default: i === 0,
        etcd: r.etcd,
        ocm: OCM_VERSION,
        coredns: r.coredns,
        pause: r.pause,
        crictl: r.crictl,
        official: official ? { kind: KIND_VERSION, kubernetes: official.kubernetes, image: `${official.tag}@${official.digest}` } : null,
        thisMachine: {
          local: localVerdict(facts),
          kindBuiltNodeImage: builtNodeVerdict(facts),
          kindOfficialNodeImage: officialNodeVerdict(r.kubernetes, facts),
        },
      };
    });
    emit(argv, { host: facts, versions: rows }, (v) => {
      const table = renderTable(
        ['KUBERNETES', 'BUILT HERE (local, kind)', 'ETCD', 'OCM', `KIND ${KIND_VERSION} NODE IMAGE (official)`],
        v.versions.map((r) => [`${r.minor}${r.default ? ' (default)' : ''}`, r.kubernetes, r.etcd, r.ocm, r.official?.image ?? '-']),
      );
      const machine = v.versions.flatMap((r) => [
        `  ${r.minor}: local (${r.kubernetes}): ${verdictText(r.thisMachine.local)}`,
        `         kind, built node image (${r.kubernetes}): ${verdictText(r.thisMachine.kindBuiltNodeImage)}`,
        `         kind, official node image${r.official ? ` (${r.official.kubernetes})` : ''}: ${verdictText(r.thisMachine.kindOfficialNodeImage)}`,
      ]);
      const note =
        'kubernetesVersion: a minor (v1.36) takes the patch of whichever source the lab uses; an exact patch gets exactly that or exit 2.\n' +
        'The built kind node image preloads the CoreDNS, pause and crictl of its row (-o json lists them).';
      return `${table}\n\n${hostLine(v.host)}:\n${machine.join('\n')}\n\n${note}`;
    });
  },
};
