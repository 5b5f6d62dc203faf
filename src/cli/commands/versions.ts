import type { CommandModule } from 'yargs';
import { loadLabConfig, type LabConfig } from '../../config/index.js';
import { cacheDir } from '../../paths.js';
import { cgroupVersionOf, readHostFacts, type HostFacts } from '../../host/facts.js';
import { KIND_VERSION, KUBERNETES_RELEASES, OCM_RELEASES, OCM_VERSION, ocmOnKubernetesProblem } from '../../provision/index.js';
import { loadMirrors, pinnedSourceSha256, sourceArchiveFor, withOcmSource, type Mirrors } from '../../provision/mirrors.js';
import { OCM_IMAGE_REPOSITORY, OCM_UPSTREAM_IMAGES } from '../../provision/recipes.js';
import { sourceArchiveState } from '../../provision/source-tree.js';
import { minorOf, OCM_MODULE, officialNodeImage } from '../../provision/versions.js';
import { emit, renderTable, type GlobalOptions } from '../output.js';
import { runtimeDefinitions } from '../../runtime/registry.js';
import type { RuntimeDefinition } from '../../runtime/types.js';
import type { RuntimeVerdict, Verdict } from '../../runtime/verdict.js';

type VersionsArgs = GlobalOptions & { mirrors?: string; 'ocm-source'?: string };

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

/** Where the built path takes an OCM release's source, and what the official path pulls. */
interface OcmSources {
  built:
    | { from: 'module-proxy'; module: string; pinnedSourceSha256?: string }
    | { from: 'source-archive'; file: string; namedBy: string; sha256: string; state: string; problem?: string };
  official: { images: string[] };
}

/**
 * The source archive of each OCM release, as `up`/`setup` would take it (--ocm-source > $OCM_LAB_OCM_SOURCE > the lab
 * file's ocmSource:, else a mirrors file's sources:), checked without extracting it; else the Go module proxy.
 */
async function ocmSourcesOf(version: string, argv: VersionsArgs, config: LabConfig, mirrors: Mirrors): Promise<OcmSources> {
  const official = { images: OCM_UPSTREAM_IMAGES.map((i) => `${OCM_IMAGE_REPOSITORY}/${i.image}:${version}`) };
  const named = argv['ocm-source']
    ? { file: argv['ocm-source'], from: '--ocm-source' }
    : process.env.OCM_LAB_OCM_SOURCE
      ? { file: process.env.OCM_LAB_OCM_SOURCE, from: '$OCM_LAB_OCM_SOURCE' }
      : config.ocmSource && config.ocmVersion === version
        ? { file: config.ocmSource, from: `ocmSource: in ${config.source ?? 'the lab file'}` }
        : undefined;
  const withNamed = named ? withOcmSource(mirrors, version, named.file, named.from, true) : mirrors;
  const archive = sourceArchiveFor(withNamed, OCM_MODULE, version);
  const pinned = pinnedSourceSha256(OCM_MODULE, version);
  if (!archive) return { built: { from: 'module-proxy', module: OCM_MODULE, ...(pinned ? { pinnedSourceSha256: pinned } : {}) }, official };
  const checked = await sourceArchiveState(archive, OCM_MODULE, version, cacheDir());
  const problem =
    checked.state === 'mismatch'
      ? `its sha256 is ${checked.actual}, not ${archive.sha256}: up/setup would refuse it (exit 7)`
      : checked.state === 'unreadable'
        ? `cannot read it: ${checked.reason}`
        : undefined;
  return {
    built: { from: 'source-archive', file: archive.file, namedBy: archive.from, sha256: archive.sha256, state: checked.state, ...(problem ? { problem } : {}) },
    official,
  };
}

/** Each OCM release with the Kubernetes releases it runs on (why not, where not) and where its binaries come from. */
async function ocmRows(argv: VersionsArgs) {
  const config = await loadLabConfig(argv.config);
  const mirrors = await loadMirrors(argv.mirrors ?? (process.env.OCM_LAB_MIRRORS || config.mirrorsFile));
  const sources = await Promise.all(OCM_RELEASES.map((r) => ocmSourcesOf(r.ocm, argv, config, mirrors)));
  return OCM_RELEASES.map((r, i) => ({
    ocm: r.ocm,
    sources: sources[i]!,
    default: r.ocm === OCM_VERSION,
    api: r.api,
    kubernetesLibraries: r.kubernetesLibraries,
    runsOn: KUBERNETES_RELEASES.map((k): OcmOnKubernetes => {
      const reason = ocmOnKubernetesProblem(r.ocm, k.kubernetes);
      return reason ? { kubernetes: k.kubernetes, supported: false, reason } : { kubernetes: k.kubernetes, supported: true };
    }),
  }));
}

type Versions = { host: HostFacts; versions: ReturnType<typeof kubernetesRows>; ocm: Awaited<ReturnType<typeof ocmRows>> };

/** "built here from the Go module proxy (open-cluster-management.io/ocm@v1.2.1)", or from a source archive and its state. */
function builtFrom(version: string, built: OcmSources['built']): string {
  if (built.from === 'module-proxy') {
    const archive = built.pinnedSourceSha256
      ? `; where the proxy refuses it, --ocm-source FILE builds it from its source archive (sha256 ${built.pinnedSourceSha256})`
      : '';
    return `the Go module proxy (${built.module}@${version})${archive}`;
  }
  const state = built.problem ?? (built.state === 'extracted' ? 'verified, extracted in the cache' : 'sha256 matches');
  return `source archive ${built.file} (${built.namedBy}; ${state})`;
}

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
  const whence = v.ocm.flatMap((r) => [
    `OCM ${r.ocm}: built here from ${builtFrom(r.ocm, r.sources.built)}`,
    `${' '.repeat(`OCM ${r.ocm}: `.length)}official images ${OCM_IMAGE_REPOSITORY}/{${OCM_UPSTREAM_IMAGES.map((i) => i.image).join(',')}}:${r.ocm}`,
  ]);
  const refused = v.ocm.flatMap((r) => r.runsOn.filter((k) => !k.supported).map((k) => `not OCM ${r.ocm} on Kubernetes ${k.kubernetes}: ${k.reason}`));
  const note =
    'kubernetesVersion: a minor (v1.36) takes the patch of whichever source the lab uses; an exact patch gets exactly that or exit 2.\n' +
    'The built kind node image preloads the CoreDNS, pause and crictl of its row (-o json lists them). ocmVersion: a minor (v1.3) picks its newest patch.';
  return [kubernetes, `${hostLine(v.host)}:\n${machine.join('\n')}`, ocm, whence.join('\n'), ...(refused.length ? [refused.join('\n')] : []), note].join(
    '\n\n',
  );
}

/**
 * `ocm-lab versions`: per Kubernetes minor a lab can run (newest first, the default marked), the patch
 * each source gives (built here and dl.k8s.io; kind's published node image, by digest, paired with the
 * pinned kind release), what comes with it, which this machine can run and why not; then the OCM
 * releases and the Kubernetes releases each runs on.
 */
export const versionsCommand: CommandModule<GlobalOptions, VersionsArgs> = {
  command: 'versions',
  describe:
    'list the Kubernetes (--kubernetes-version, kubernetesVersion:) and OCM versions (--ocm-version, ocmVersion:) a lab can run, ' +
    'the patch each source gives, where OCM comes from, and what this machine can run',
  builder: (y) =>
    y
      .option('mirrors', { type: 'string', describe: "a mirrors file, as up and setup take it (else $OCM_LAB_MIRRORS, the lab file's mirrors:)" })
      .option('ocm-source', {
        type: 'string',
        describe: "OCM's source archive, as up and setup take it (else $OCM_LAB_OCM_SOURCE, the lab file's ocmSource:): shown checked against its pin",
      }),
  handler: async (argv) => {
    const [host, runtimes] = await Promise.all([readHostFacts({ engine: true }), runtimeDefinitions()]);
    emit(argv, { host, versions: kubernetesRows(host, runtimes), ocm: await ocmRows(argv) }, renderVersions);
  },
};
