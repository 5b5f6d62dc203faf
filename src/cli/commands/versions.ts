import type { CommandModule } from 'yargs';
import { cgroupVersionOf, readHostFacts, type HostFacts } from '../../host/facts.js';
import { KIND_VERSION, KUBERNETES_RELEASES, OCM_RELEASES, OCM_VERSION, ocmOnKubernetesProblem } from '../../provision/index.js';
import { minorOf, officialNodeImage } from '../../provision/versions.js';
import { emit, renderTable, type GlobalOptions } from '../output.js';
import { runtimeDefinitions } from '../../runtime/registry.js';
import type { RuntimeDefinition } from '../../runtime/types.js';
import type { RuntimeVerdict, Verdict } from '../../runtime/verdict.js';

interface OcmOnKubernetes {
  kubernetes: string;
  supported: boolean;
  /** Why not, where not. */
  reason?: string;
}

function verdictText(v: Verdict): string {
  return v.ok ? 'yes' : `no: ${v.why}`;
}

function hostLine(facts: HostFacts): string {
  const engine = facts.engine;
  const docker = engine?.available ? 'Docker answers' : `Docker does not answer${engine?.reason ? ` (${engine.reason})` : ''}`;
  const cgroup = cgroupVersionOf(facts);
  const cgroupText = cgroup.value ? `cgroup v${cgroup.value}${cgroup.from === 'engine' ? " (the engine's)" : ''}` : 'cgroup unknown';
  return `this machine: ${facts.platform.os}/${facts.platform.arch}, ${cgroupText}, ${docker}, ${facts.root ? 'root' : 'not root'}`;
}

/** Per Kubernetes minor: the patch each source gives, what comes with it, and what each runtime says this machine can run. */
function kubernetesRows(facts: HostFacts, runtimes: readonly RuntimeDefinition[]) {
  return KUBERNETES_RELEASES.map((r, i) => {
    const official = officialNodeImage(r.kubernetes);
    return {
      minor: minorOf(r.kubernetes),
      kubernetes: r.kubernetes,
      default: i === 0,
      etcd: r.etcd,
      coredns: r.coredns,
      pause: r.pause,
      crictl: r.crictl,
      official: official ? { kind: KIND_VERSION, kubernetes: official.kubernetes, image: `${official.tag}@${official.digest}` } : null,
      thisMachine: Object.fromEntries(verdictsOf(r.kubernetes, facts, runtimes).map((v) => [v.key, v.verdict])) as Record<string, Verdict>,
      ways: verdictsOf(r.kubernetes, facts, runtimes).map((v) => v.label),
    };
  });
}

function verdictsOf(kubernetes: string, facts: HostFacts, runtimes: readonly RuntimeDefinition[]): RuntimeVerdict[] {
  return runtimes.flatMap((d) => d.verdicts(kubernetes, facts));
}

/** Each OCM release with the Kubernetes releases it runs on (why not, where not). */
function ocmRows() {
  return OCM_RELEASES.map((r) => ({
    ocm: r.ocm,
    default: r.ocm === OCM_VERSION,
    api: r.api,
    kubernetesLibraries: r.kubernetesLibraries,
    runsOn: KUBERNETES_RELEASES.map((k): OcmOnKubernetes => {
      const reason = ocmOnKubernetesProblem(r.ocm, k.kubernetes);
      return reason ? { kubernetes: k.kubernetes, supported: false, reason } : { kubernetes: k.kubernetes, supported: true };
    }),
  }));
}

type Versions = { host: HostFacts; versions: ReturnType<typeof kubernetesRows>; ocm: ReturnType<typeof ocmRows> };

const marked = (version: string, isDefault: boolean) => `${version}${isDefault ? ' (default)' : ''}`;

function renderVersions(v: Versions): string {
  const kubernetes = renderTable(
    ['KUBERNETES', 'BUILT HERE (local, kind)', 'ETCD', `KIND ${KIND_VERSION} NODE IMAGE (official)`],
    v.versions.map((r) => [marked(r.minor, r.default), r.kubernetes, r.etcd, r.official?.image ?? '-']),
  );
  const machine = v.versions.flatMap((r) =>
    Object.values(r.thisMachine).map((verdict, i) => `${i === 0 ? `  ${r.minor}: ` : '         '}${r.ways[i]}: ${verdictText(verdict)}`),
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
  const note =
    'kubernetesVersion: a minor (v1.36) takes the patch of whichever source the lab uses; an exact patch gets exactly that or exit 2.\n' +
    'The built kind node image preloads the CoreDNS, pause and crictl of its row (-o json lists them). ocmVersion: a minor (v1.3) picks its newest patch.';
  return [kubernetes, `${hostLine(v.host)}:\n${machine.join('\n')}`, ocm, ...(refused.length ? [refused.join('\n')] : []), note].join('\n\n');
}

/**
 * `ocm-lab versions`: per Kubernetes minor a lab can run (newest first, the default marked), the patch
 * each source gives (built here and dl.k8s.io; kind's published node image, by digest, paired with the
 * pinned kind release), what comes with it, which this machine can run and why not; then the OCM
 * releases and the Kubernetes releases each runs on.
 */
export const versionsCommand: CommandModule<GlobalOptions, GlobalOptions> = {
  command: 'versions',
  describe:
    'list the Kubernetes (--kubernetes-version, kubernetesVersion:) and OCM versions (--ocm-version, ocmVersion:) a lab can run, ' +
    'the patch each source gives, and what this machine can run',
  handler: async (argv) => {
    const [host, runtimes] = await Promise.all([readHostFacts({ engine: true }), runtimeDefinitions()]);
    emit(argv, { host, versions: kubernetesRows(host, runtimes), ocm: ocmRows() }, renderVersions);
  },
};
