import type { LabConfig } from '../../../config/index.js';
import { MissingPrerequisiteError, RegistryUnavailableError } from '../../../errors.js';
import { architectureOf, cgroupVersionOf, readHostFacts, type HostFacts } from '../../../host/facts.js';
import { pinnedDigest, pullPinned, type PinnedImage } from '../../../images/pinned-pull.js';
import type { ArtifactsMode } from '../../../provision/artifacts.js';
import { registryBase, type Mirrors } from '../../../provision/mirrors.js';
import { readImageConfig } from '../../../provision/oci/config.js';
import { hostPlatform } from '../../../provision/oci/platform.js';
import { familiarReference, parseReference } from '../../../provision/oci/reference.js';
import { KIND_VERSION, kubernetesPatchFor, minorOf, officialNodeImage } from '../../../provision/versions.js';
import { NODE_CGROUP_V1_LABEL } from './node-files.js';

/** kind's published node images from this minor on run only under cgroup v2 (kind's release notes). */
const CGROUP_V2_ONLY_FROM = 'v1.35';

/** Which node image a lab's clusters start from, and the one line that says why. */
export type NodeImageChoice = { source: 'official'; ref: string; line: string } | { source: 'build'; line: string };

export interface NodeImageFacts {
  /** The engine's cgroup version (`docker info`: on Docker Desktop it is the VM's, which is what nodes run under). */
  cgroupVersion: () => Promise<string>;
  /** The labels of the image's configuration for this platform, read through the registry API (no layer pulled). */
  labels: (image: PinnedImage, mirrors: Mirrors) => Promise<Record<string, string>>;
}

/** The engine's facts (host/facts.ts), read once per choice: its cgroup version, and its architecture for the image's config. */
function engineFacts(): NodeImageFacts {
  let facts: Promise<HostFacts> | undefined;
  const read = () => (facts ??= readHostFacts({ engine: true }));
  return {
    cgroupVersion: async () => cgroupVersionOf(await read()).value ?? '',
    labels: async (image, mirrors) => {
      const ref = parseReference(image.name);
      const platform = hostPlatform(architectureOf(await read()).value);
      return (
        await readImageConfig({ reference: image.name, registryBase: registryBase(mirrors, ref.host), expectedDigest: pinnedDigest(image, mirrors), platform })
      ).labels;
    },
  };
}

function newerOrSame(minor: string, than: string): boolean {
  const [a, b] = [minor, than].map((v) => v.replace(/^v/, '').split('.').map(Number)) as [number[], number[]];
  return (a[0] ?? 0) - (b[0] ?? 0) > 0 || ((a[0] ?? 0) === (b[0] ?? 0) && (a[1] ?? 0) >= (b[1] ?? 0));
}

/**
 * Decides between kind's published node image (pinned by digest with the kind release) and the one built
 * here, before anything large is pulled: `build` builds; otherwise the official image, unless the lab file
 * names a patch only the build gives, or the engine runs cgroup v1 and the image does not say (label
 * NODE_CGROUP_V1_LABEL) that it runs there. Under `official` a registry that does not answer is an error;
 * under `auto` the build takes over and the line says why.
 */
export async function chooseNodeImage(
  config: Pick<LabConfig, 'kubernetesVersion' | 'kubernetesRequest'>,
  artifacts: ArtifactsMode,
  mirrors: Mirrors,
  facts: NodeImageFacts = engineFacts(),
): Promise<NodeImageChoice> {
  if (artifacts === 'build') return { source: 'build', line: 'node image: built here (artifacts: build)' };
  const official = officialNodeImage(config.kubernetesVersion);
  if (!official) return { source: 'build', line: `node image: built here (kind ${KIND_VERSION} publishes none for ${minorOf(config.kubernetesVersion)})` };
  const patch = kubernetesPatchFor(config.kubernetesRequest ?? minorOf(config.kubernetesVersion), 'official-node');
  if ('problem' in patch) return { source: 'build', line: `node image: built here (${patch.problem})` };
  const image: PinnedImage = { name: official.tag, digest: official.digest };
  const cgroup = await facts.cgroupVersion();
  if (cgroup === '1' && newerOrSame(minorOf(official.kubernetes), CGROUP_V2_ONLY_FROM)) {
    let labels: Record<string, string>;
    try {
      labels = await facts.labels(image, mirrors);
    } catch (err) {
      if (artifacts === 'official' || !(err instanceof RegistryUnavailableError)) throw err;
      return { source: 'build', line: `node image: built here (${official.tag}: ${err.message})` };
    }
    if (labels[NODE_CGROUP_V1_LABEL] !== 'true') {
      return {
        source: 'build',
        line: `node image: built here (this Docker engine runs cgroup v1; kind's node images for Kubernetes ≥ ${CGROUP_V2_ONLY_FROM} need cgroup v2)`,
      };
    }
  }
  return { source: 'official', ref: `${image.name}@${pinnedDigest(image, mirrors)}`, line: `node image: ${official.tag} (kind ${KIND_VERSION}'s, by digest)` };
}

/**
 * Whether kind's published node image for `kubernetesVersion`, as the registry (or a mirror) serves it, says it runs
 * under cgroup v1 (label NODE_CGROUP_V1_LABEL): what chooseNodeImage asks on a cgroup v1 engine. A registry that does
 * not answer, or no such image, is a no.
 */
export async function publishedNodeRunsOnCgroupV1(kubernetesVersion: string, mirrors: Mirrors, facts: NodeImageFacts = engineFacts()): Promise<boolean> {
  const official = officialNodeImage(kubernetesVersion);
  if (!official) return false;
  const labels = await facts.labels({ name: official.tag, digest: official.digest }, mirrors).catch(() => ({}) as Record<string, string>);
  return labels[NODE_CGROUP_V1_LABEL] === 'true';
}

/** The chosen official node image in the engine (docker pull by digest); under `auto` a failed pull returns null: build it. */
export async function pullOfficialNode(
  choice: Extract<NodeImageChoice, { source: 'official' }>,
  artifacts: ArtifactsMode,
  mirrors: Mirrors,
  progress: (line: string) => void,
): Promise<string | null> {
  // choice.ref is `name:tag@digest` (chooseNodeImage): the name as kind publishes it, and the digest to pull by.
  const { digest, ...named } = parseReference(choice.ref);
  try {
    return await pullPinned({ name: familiarReference(named), digest: digest ?? '' }, mirrors, progress);
  } catch (err) {
    if (artifacts === 'auto' && err instanceof RegistryUnavailableError) {
      progress(`node image: ${err.message}; building it here instead`);
      return null;
    }
    if (err instanceof RegistryUnavailableError) throw err;
    throw new MissingPrerequisiteError(`pulling ${choice.ref}: ${(err as Error).message}`, { hint: 'use --artifacts build to build the node image here' });
  }
}
