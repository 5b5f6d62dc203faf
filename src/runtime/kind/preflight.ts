import { architectureOf, cgroupVersionOf, engineSharesHostKernel, readHostFacts, readInotifyUse, type HostFacts, type InotifyUse } from '../../host/facts.js';
import { dockerInspect } from '../../images/docker.js';
import type { ArtifactsMode } from '../../provision/artifacts.js';
import { NO_MIRRORS, type Mirrors } from '../../provision/mirrors.js';
import { inotifyCheck, type PreflightCheck } from '../preflight.js';
import { podmanChecks, podmanHostChecks } from './podman-checks.js';
import { nodeImageCached, nodeImageRef } from './images/node-image.js';
import { publishedNodeRunsOnCgroupV1 } from './images/official-node.js';
import { builtNodeVerdict, officialNodeVerdict, onlyCgroupV1Blocks } from './verdicts.js';

/** kind's advice for many clusters on one machine (its known-issues page, "Pod errors due to too many open files"). */
export const KIND_RECOMMENDED_INOTIFY = { instances: 512, watches: 524288 };
/**
 * inotify instances and watches one node of this lab takes with OCM and the default addons running, counted for root
 * (the nodes' processes run as root; OCM's agents run as uid 10001 and count against that user's own limit), by the
 * cgroup version of the engine. Measured on this machine's cgroup v1 engine (docs/measured/preflight.md): 26 instances
 * on every node, 310-556 watches (kubelet 7, kube-controller-manager 7, kube-apiserver 6, systemd 4). Under cgroup
 * v2 containerd's shim also holds one instance per running container to hear of its OOM kills (memory.events): 26
 * containers on a spoke's node here, so v2 is reckoned at v1's figure plus 26, not measured (no cgroup v2 here).
 */
export const INOTIFY_PER_KIND_NODE: Readonly<Record<'1' | '2', { instances: number; watches: number }>> = {
  '1': { instances: 30, watches: 1024 },
  '2': { instances: 56, watches: 1024 },
};
/** Headroom over what is held now plus the new nodes' share: a shell, kubectl, a pod or two of the user's. */
const INOTIFY_SPARE = { instances: 8, watches: 1024 };
/**
 * MemAvailable a new cluster needs. Measured here (docker stats, 2026-11-23):
 * one kind node of this lab, idle without OCM, uses 450-520 MiB; OCM's agents
 * and the addons add a few hundred MiB; the rest is headroom for kubeadm's
 * start-up peak and the host's own page cache.
 */
export const MEMORY_PER_CLUSTER_BYTES = 1.5 * 1024 ** 3;

/** The architectures kind's node images exist for: kind publishes amd64 and arm64, and the build here makes those. */
const NODE_ARCHITECTURES = ['amd64', 'arm64'];

const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GiB`;

/** What kind's preflight decides from. */
export interface KindPreflightInput {
  kubernetesVersion: string;
  /** Where artifacts come from (`build`: the node image is built here, kind's published one is not considered). */
  artifacts: ArtifactsMode;
  /** `--node-image` or the lab file's runtime.kind.nodeImage: no node image is chosen, its platform is the user's. */
  nodeImage?: string;
  /** Clusters this `up` creates (a running lab's are counted in the inotify use). */
  newClusters: number;
  facts: HostFacts;
  /** inotify use of the user the engine's containers run as (root; the user's own with a rootless engine); null when not read. */
  inotifyInUse: InotifyUse | null;
  /** The node image built here is in the engine, or its tarball or root filesystem in the cache: that path then needs only Docker. */
  builtImageCached: boolean;
  /**
   * On a cgroup v1 engine: the published node image, as its registry or a mirror serves it, says it runs there (the
   * label chooseNodeImage reads), so it is taken after all.
   */
  publishedRunsOnCgroupV1?: boolean;
}

/** The user whose inotify limits the nodes' processes count against: root for a rootful engine, else the user running ocm-lab. */
export function nodesUid(facts: HostFacts, ownUid: number): number {
  return facts.engine?.rootless ? ownUid : 0;
}

/**
 * Can this platform run kind at all, and which node image: the engine answers and runs Linux containers of an
 * architecture kind's images exist for, and the published node image or the one built here can run on it. Pure.
 */
export function kindPlatformChecks(input: KindPreflightInput): PreflightCheck[] {
  const { facts } = input;
  const checks: PreflightCheck[] = [];
  const engine = facts.engine;
  if (!engine?.available) {
    checks.push({
      check: 'engine',
      level: 'stop',
      line: `the kind runtime needs a Docker engine or Podman: ${engine?.reason ?? 'none was asked'}`,
      fix:
        'start Docker (Docker Desktop, `systemctl start docker`) or install Podman (OCM_LAB_ENGINE=docker|podman picks one), ' +
        'or use --runtime local (Linux, root)',
    });
    return checks;
  }
  if (engine.osType !== null && engine.osType !== 'linux') {
    checks.push({
      check: 'engine',
      level: 'stop',
      line: `the Docker engine runs ${engine.osType} containers; kind's nodes are Linux containers`,
      fix: 'switch Docker Desktop to Linux containers',
    });
    return checks;
  }
  const arch = architectureOf(facts);
  const archFrom = arch.from === 'engine' ? 'the engine' : 'this machine';
  if (engine.name === 'podman') {
    checks.push({ check: 'engine', level: 'ok', line: `podman ${engine.version ?? '?'} answers (${engine.osType ?? 'OS unknown'}, ${arch.value})` });
    const podman = [...podmanChecks(engine), ...podmanHostChecks(facts)];
    checks.push(...podman);
    if (podman.some((c) => c.level === 'stop')) return checks;
  } else {
    checks.push({ check: 'engine', level: 'ok', line: `a Docker engine answers (${engine.osType ?? 'OS unknown'}, ${arch.value})` });
  }
  if (input.nodeImage) {
    checks.push({ check: 'node image', level: 'ok', line: `${input.nodeImage} as given (its platform is not checked)` });
    return checks;
  }
  if (!NODE_ARCHITECTURES.includes(arch.value)) {
    checks.push({
      check: 'architecture',
      level: 'stop',
      line: `kind's node images exist for ${NODE_ARCHITECTURES.join(' and ')}; ${archFrom} runs ${arch.value}`,
      fix: 'use an amd64 or arm64 machine or Docker engine, or --runtime local (Linux, root)',
    });
    return checks;
  }
  const official = input.artifacts === 'build' ? { ok: false, why: 'not with --artifacts build' } : officialNodeVerdict(input.kubernetesVersion, facts);
  if (official.ok) {
    checks.push({ check: 'node image', level: 'ok', line: `kind's published node image for ${input.kubernetesVersion} runs on this engine` });
    return checks;
  }
  if (input.publishedRunsOnCgroupV1 && input.artifacts !== 'build') {
    checks.push({
      check: 'node image',
      level: 'ok',
      line: `the node image served as kind's for ${input.kubernetesVersion} is labelled to run under cgroup v1 (${official.why ?? 'cgroup v1'})`,
    });
    return checks;
  }
  // The build makes the node image from this machine's binaries (provision/recipes.ts: the host's architecture).
  const foreign = arch.value !== facts.platform.arch && `it would carry ${facts.platform.arch} binaries and the engine runs ${arch.value}`;
  const built = input.builtImageCached ? { ok: true } : foreign ? { ok: false, why: foreign } : builtNodeVerdict(facts);
  if (built.ok) {
    checks.push({
      check: 'node image',
      level: 'ok',
      line: `built here (${input.builtImageCached ? 'in the engine or the cache already' : 'by up'}); kind's published one: ${official.why}`,
    });
    return checks;
  }
  const cgroupV1 = /cgroup v2/.test(official.why ?? '');
  checks.push({
    check: 'node image',
    level: 'stop',
    line: `no node image can run here: kind's published one: ${official.why}; the one built here: ${built.why}`,
    fix:
      facts.platform.os === 'linux' && !facts.root && !foreign
        ? '`sudo ocm-lab setup --runtime kind` once (builds the node image as root; later runs need only Docker)'
        : cgroupV1
          ? 'use a Docker engine with cgroup v2 (a current Linux, Docker Desktop), or build the node image on a Linux machine of the same architecture as root'
          : 'use --node-image with a node image for this engine, or --runtime local (Linux, root)',
  });
  return checks;
}

/**
 * Can the machine take the new nodes: inotify limits (on Linux, where the nodes share this kernel) and memory. A limit
 * below what the nodes need stops `up`; between that and kind's advice, a warning. Pure.
 */
export function kindCapacityChecks(input: KindPreflightInput): PreflightCheck[] {
  const { facts, newClusters } = input;
  if (facts.platform.os !== 'linux') {
    // On macOS and Windows the nodes run in Docker Desktop's VM: its limits are not ours to read.
    return [{ check: 'inotify and memory', level: 'ok', line: `not checked: the nodes run in the engine's VM, not on this ${facts.platform.os} machine` }];
  }
  if (!engineSharesHostKernel(facts)) {
    return [
      {
        check: 'inotify and memory',
        level: 'ok',
        line: `not checked: the engine runs kernel ${facts.engine?.kernel ?? '?'}, not this machine's ${facts.kernel ?? '?'} (a VM or a remote engine)`,
      },
    ];
  }
  const inUse = input.inotifyInUse;
  // An engine that does not say is taken for cgroup v2, the larger need.
  const perNode = INOTIFY_PER_KIND_NODE[cgroupVersionOf(facts).value ?? '2'];
  const checks = [
    inotifyCheck({
      key: 'fs.inotify.max_user_instances',
      limit: facts.inotify.maxUserInstances,
      inUse: inUse?.instances ?? null,
      perCluster: perNode.instances,
      newClusters,
      spare: INOTIFY_SPARE.instances,
      recommended: KIND_RECOMMENDED_INOTIFY.instances,
      what: 'kind node',
    }),
    inotifyCheck({
      key: 'fs.inotify.max_user_watches',
      limit: facts.inotify.maxUserWatches,
      inUse: inUse?.watches ?? null,
      perCluster: perNode.watches,
      newClusters,
      spare: INOTIFY_SPARE.watches,
      recommended: KIND_RECOMMENDED_INOTIFY.watches,
      what: 'kind node',
    }),
  ];
  const needed = newClusters * MEMORY_PER_CLUSTER_BYTES;
  if (facts.memAvailableBytes === null || newClusters === 0) {
    checks.push({ check: 'memory', level: 'ok', line: newClusters === 0 ? 'no cluster to start' : 'MemAvailable not read' });
  } else if (facts.memAvailableBytes < needed) {
    checks.push({
      check: 'memory',
      level: 'stop',
      line:
        `${gib(facts.memAvailableBytes)} of memory is available; ` +
        `${newClusters} new kind cluster${newClusters === 1 ? '' : 's'} need about ${gib(needed)} (${gib(MEMORY_PER_CLUSTER_BYTES)} each)`,
      fix: 'free memory (stop other labs: ocm-lab down --config …), or use a lab file with fewer clusters',
    });
  } else {
    checks.push({
      check: 'memory',
      level: 'ok',
      line: `${gib(facts.memAvailableBytes)} available; ${newClusters} new kind clusters need about ${gib(needed)}`,
    });
  }
  return checks;
}

/** Every check of `up --runtime kind`, in the order `up` makes them. Pure. */
export function kindPreflight(input: KindPreflightInput): PreflightCheck[] {
  const platform = kindPlatformChecks(input);
  return platform.some((c) => c.level === 'stop') ? platform : [...platform, ...kindCapacityChecks(input)];
}

/**
 * Reads what kind's preflight decides from: the host's and the engine's facts (`facts` replaces that read), the
 * inotify use of the user the nodes run as, and, only when kind's published node image cannot run here, whether
 * the node image built here is in the engine already.
 */
export async function readKindPreflightInput(
  options: Omit<KindPreflightInput, 'facts' | 'inotifyInUse' | 'builtImageCached' | 'publishedRunsOnCgroupV1'> & { mirrors?: Mirrors },
  facts?: HostFacts,
  inUse?: InotifyUse,
): Promise<KindPreflightInput> {
  const host = facts ?? (await readHostFacts({ engine: true }));
  const inotifyInUse = !engineSharesHostKernel(host) ? null : (inUse ?? (await readInotifyUse(nodesUid(host, process.getuid?.() ?? 0))));
  const verdict = officialNodeVerdict(options.kubernetesVersion, host);
  // Only cgroup v1 stands in the way: the image's own label decides, as when the node image is chosen.
  const publishedRunsOnCgroupV1 =
    options.artifacts !== 'build' &&
    !options.nodeImage &&
    onlyCgroupV1Blocks(options.kubernetesVersion, host) &&
    (await publishedNodeRunsOnCgroupV1(options.kubernetesVersion, options.mirrors ?? NO_MIRRORS));
  const officialOk = options.artifacts !== 'build' && (verdict.ok || publishedRunsOnCgroupV1);
  const builtImageCached =
    !options.nodeImage &&
    !officialOk &&
    host.engine?.available === true &&
    ((await dockerInspect('image', [nodeImageRef(options.kubernetesVersion)])).length > 0 || (await nodeImageCached(options.kubernetesVersion)));
  const { mirrors: _mirrors, ...rest } = options;
  return { ...rest, facts: host, inotifyInUse, builtImageCached, publishedRunsOnCgroupV1 };
}
