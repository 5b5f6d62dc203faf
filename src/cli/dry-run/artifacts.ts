import type { LabConfig } from '../../config/index.js';
import { architectureOf, cgroupVersionOf, readHostFacts, type HostFacts, type Sourced } from '../../host/facts.js';
import { chooseArtifacts, type ArtifactsMode } from '../../provision/artifacts.js';
import { HOST_PLATFORM_ENV, hostPlatform, platformName } from '../../provision/platform.js';
import type { ArtifactSource } from '../../provision/sources.js';
import type { RuntimeDefinition } from '../../runtime/types.js';

/** `up --dry-run`'s artifacts: the path it would take, the facts that decided it, and each artifact's source on that path. */
export interface ArtifactsDryRun {
  mode: ArtifactsMode;
  /** What chose the mode (`--artifacts build`, `default`, …). */
  origin: string;
  /** `official`: the publishers first (--dry-run asks none of them; under auto, what cannot be fetched is built here); `build`: built here. */
  path: 'official' | 'build';
  facts: {
    platform: string;
    /** `OCM_LAB_HOST_PLATFORM` when the variable set it, else `this machine`. */
    platformFrom: string;
    /** The container engine, where the runtime reads it: whether it answers, and what it runs. */
    engine: { available: boolean; reason?: string; osType: string | null } | null;
    cgroupVersion: Sourced<'1' | '2' | null>;
    architecture: Sourced<string>;
  };
  artifacts: ArtifactSource[];
}

/**
 * The artifacts section of `up --dry-run` for `runtime`: decides the path as `up` would without asking the
 * publishers (flag > environment > lab file > auto), reads the facts once (the engine's where the runtime
 * uses one) and asks the runtime for each artifact's source. `facts` replaces the read (tests).
 */
export async function planArtifacts(
  definition: RuntimeDefinition,
  config: LabConfig,
  flags: { artifacts?: string; download?: boolean } = {},
  facts?: HostFacts,
): Promise<ArtifactsDryRun> {
  const choice = chooseArtifacts({ flag: flags.artifacts, download: flags.download, labFile: config.artifacts });
  hostPlatform(); // a bad $OCM_LAB_HOST_PLATFORM is exit 2 here, given facts or not
  const read = facts ?? (await readHostFacts({ engine: definition.usesEngine === true }));
  const path = choice.mode === 'build' ? 'build' : 'official';
  return {
    mode: choice.mode,
    origin: choice.origin,
    path,
    facts: {
      platform: platformName(read.platform),
      platformFrom: process.env[HOST_PLATFORM_ENV] ? HOST_PLATFORM_ENV : 'this machine',
      engine: read.engine
        ? { available: read.engine.available, ...(read.engine.reason ? { reason: read.engine.reason } : {}), osType: read.engine.osType }
        : null,
      cgroupVersion: cgroupVersionOf(read),
      architecture: architectureOf(read),
    },
    artifacts: await definition.artifacts(config, path, read),
  };
}

function sourceText(a: ArtifactSource): string {
  if (a.from === 'download') return `${a.url}, checked against ${a.checksumFile}${a.sha256 ? ` and pinned sha256:${a.sha256}` : ''}`;
  if (a.from === 'image') return `${a.image}${a.digest ? `@${a.digest}` : ' (by tag)'}`;
  return `built here from ${a.builtFrom}`;
}

export function renderArtifacts(a: ArtifactsDryRun): string {
  const f = a.facts;
  const engine = f.engine
    ? f.engine.available
      ? `a Docker engine answers (${f.engine.osType ?? 'OS unknown'})`
      : 'no Docker engine answers'
    : 'no engine asked';
  const cgroup = f.cgroupVersion.value
    ? `cgroup v${f.cgroupVersion.value} (${f.cgroupVersion.from === 'engine' ? "the engine's" : "the host's"})`
    : 'cgroup unknown';
  const arch = `${f.architecture.value} (${f.architecture.from === 'engine' ? "the engine's" : "the host's"})`;
  const path =
    a.path === 'build'
      ? `built here (${a.origin})`
      : `official (${a.origin}): the publishers first, not asked by --dry-run${a.mode === 'auto' ? '; what cannot be fetched is built here' : ''}`;
  const width = Math.max(...a.artifacts.map((x) => `${x.artifact} ${x.version}`.length));
  return [
    `Artifacts: ${path}`,
    `  decided with: platform ${f.platform} (${f.platformFrom}), ${engine}, ${cgroup}, architecture ${arch}`,
    ...a.artifacts.map((x) => `  ${`${x.artifact} ${x.version}`.padEnd(width)}  ${x.from === 'built here' ? '' : `${x.from}: `}${sourceText(x)}`),
  ].join('\n');
}
