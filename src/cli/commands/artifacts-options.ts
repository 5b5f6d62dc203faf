import type { Argv } from 'yargs';
import type { LabConfig } from '../../config/index.js';
import { InvalidInputError } from '../../errors.js';
import { ARTIFACT_MODES, chooseArtifacts, decideArtifacts, provisionMode, type ArtifactsDecision, type ArtifactsMode } from '../../provision/artifacts.js';
import { loadMirrors, pinnedSourceSha256, sourceArchiveFor, withOcmSource, type Mirrors } from '../../provision/mirrors.js';
import { readHostFacts } from '../../host/facts.js';
import { hostPlatform } from '../../provision/platform.js';
import { kubernetesPatchFor, OCM_MODULE } from '../../provision/versions.js';
import { runtimeDefinition } from '../../runtime/registry.js';
import type { GlobalOptions } from '../output.js';

export interface ArtifactFlags {
  artifacts?: string;
  mirrors?: string;
  download?: boolean;
  'ocm-source'?: string;
}

// Imports stay light (no provision barrel, Docker on demand): `up` is in the same module graph as `status`.

/** `--artifacts`, `--mirrors` and the older `--download`/`--no-download`, as `up` and `setup` take them. */
export function artifactOptions<T>(y: Argv<T>): Argv<T & ArtifactFlags> {
  return y
    .option('artifacts', {
      type: 'string',
      choices: ARTIFACT_MODES,
      describe:
        'where binaries and images come from: official (publishers only), build (built here), auto (official first, else build); ' +
        'default: $OCM_LAB_ARTIFACTS, the lab file, auto',
    })
    .option('mirrors', {
      type: 'string',
      describe: 'a mirrors file: registries, downloads and digests to use instead of the publishers (else $OCM_LAB_MIRRORS)',
    })
    .option('ocm-source', {
      type: 'string',
      describe:
        "OCM's source archive (.tar.gz of its tree at the lab's OCM version, with vendor/): the built path builds OCM from it " +
        "instead of the Go module proxy, held to the sha256 ocm-lab pins (else $OCM_LAB_OCM_SOURCE, the lab file's ocmSource:)",
    })
    .option('download', { type: 'boolean', describe: 'older spelling: --no-download is --artifacts build, --download is --artifacts auto' }) as Argv<
    T & ArtifactFlags
  >;
}

/** The mode the flags, $OCM_LAB_ARTIFACTS and the lab file choose, without probing anything (what `up --dry-run` plans with). */
export function chosenArtifactsMode(argv: ArtifactFlags, config: LabConfig): ArtifactsMode {
  return chooseArtifacts({ flag: argv.artifacts, download: argv.download, labFile: config.artifacts }).mode;
}

/** What up and setup provision with, once decided. */
export interface ArtifactsPlan {
  decision: ArtifactsDecision;
  artifacts: ArtifactsMode;
  mirrors: Mirrors;
}

/**
 * Decides official or built once (probing the publishers the runtime needs), prints the one line of the
 * decision (stderr; with -o json the caller puts the decision in its JSON), and checks that the lab's
 * Kubernetes version is one the chosen source gives (exit 2 otherwise).
 */
export async function decideArtifactsFor(argv: ArtifactFlags & Pick<GlobalOptions, 'output'>, config: LabConfig, runtime: string): Promise<ArtifactsPlan> {
  hostPlatform(); // a bad $OCM_LAB_HOST_PLATFORM is exit 2 before anything is decided
  const definition = await runtimeDefinition(runtime);
  const choice = chooseArtifacts({ flag: argv.artifacts, download: argv.download, labFile: config.artifacts });
  const mirrors = withLabOcmSource(await loadMirrors(argv.mirrors ?? (process.env.OCM_LAB_MIRRORS || config.mirrorsFile)), argv, config);
  // What provisions without the plan's mirrors (the kind runtime's OCM images) finds a pinned archive through the environment.
  const archive = sourceArchiveFor(mirrors, OCM_MODULE, config.ocmVersion);
  if (archive && archive.sha256 === pinnedSourceSha256(OCM_MODULE, config.ocmVersion)) process.env.OCM_LAB_OCM_SOURCE = archive.file;
  const decision = await decideArtifacts(choice, { sources: definition.officialSources, mirrors });
  if (argv.output !== 'json') process.stderr.write(`${decision.line}\n`);
  if (config.kubernetesRequest) {
    const facts = definition.kubernetesSource && decision.source === 'official' ? await readHostFacts({ engine: definition.usesEngine === true }) : undefined;
    const source = facts && definition.kubernetesSource ? definition.kubernetesSource(config.kubernetesVersion, facts) : 'built';
    const patch = kubernetesPatchFor(config.kubernetesRequest, source);
    if ('problem' in patch) {
      throw new InvalidInputError(`kubernetesVersion ${config.kubernetesRequest}: ${patch.problem}`, {
        hint: '`ocm-lab versions` shows which patch each source gives and which this machine can run',
      });
    }
  }
  return { decision, artifacts: provisionMode(decision), mirrors };
}

/**
 * The mirrors with the lab's OCM source archive, if one is named: `--ocm-source` > $OCM_LAB_OCM_SOURCE > the lab file's
 * `ocmSource:`. Named for an OCM version ocm-lab pins no archive digest for, the flag and the lab file are exit 2; the
 * environment variable (CI sets it for every lab) is then left out, and the Go module proxy builds that version.
 */
export function withLabOcmSource(
  mirrors: Mirrors,
  argv: Pick<ArtifactFlags, 'ocm-source'>,
  config: Pick<LabConfig, 'ocmVersion' | 'ocmSource' | 'source'>,
): Mirrors {
  const env = process.env.OCM_LAB_OCM_SOURCE || undefined;
  if (argv['ocm-source']) return withOcmSource(mirrors, config.ocmVersion, argv['ocm-source'], '--ocm-source');
  if (env) return withOcmSource(mirrors, config.ocmVersion, env, '$OCM_LAB_OCM_SOURCE', true);
  if (config.ocmSource) return withOcmSource(mirrors, config.ocmVersion, config.ocmSource, `ocmSource: in ${config.source ?? 'the lab file'}`);
  return mirrors;
}
