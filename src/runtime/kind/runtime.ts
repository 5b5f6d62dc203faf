import fs from 'node:fs/promises';
import path from 'node:path';
import type { LabConfig } from '../../config/index.js';
import { MissingPrerequisiteError, NotFoundError } from '../../errors.js';
import { clusterKubeconfigFile, labDir } from '../../paths.js';
import type { DownOptions, DownResult, LabCluster, LabRun, LabStatus, PlanOptions, Provisioning, Runtime, RuntimePlan, Step, UpOptions } from '../types.js';
import { renderKindPlan } from './dry-run.js';
import { loadCollaborators, type Collaborators, type ImageSources, type LabImageSet } from './collaborators.js';
import { artifactsFromEnv } from '../../provision/artifacts.js';
import { NO_MIRRORS } from '../../provision/mirrors.js';
import { kindAvailability } from './availability.js';
import { docker, dockerEngine, dockerInspect, engineCli } from '../../images/docker.js';
import { currentEngine } from '../../images/engine/index.js';
import { ensureHubEndpoint, inspectContainer, removeContainer } from './hub-endpoint.js';
import { readKindTemplates } from './kind-config.js';
import { KindCli, locateKind, requireKind } from './kind-cli.js';
import { entryFromKindKubeconfig, writeLabKubeconfigs } from './kubeconfigs.js';
import { hubEndpointName, KIND_CLUSTER_LABEL, kindClusterName, nodeContainerName, vpcNetworkName } from './names.js';
import { ensureNetwork, inspectNetworks, labNetworks, removeNetwork } from './networks.js';
import { ensureNodeEgressGuards } from './node-routes.js';
import { startPrepulls } from '../../images/registry/prepull.js';
import { clusterConflist, clusterCreateConcurrency, planKindLab, type KindClusterPlan, type KindLabPlan } from './plan.js';
import type { PodNetwork } from './images/cni.js';
import { officialNodeImage } from '../../provision/versions.js';
import type { ArtifactsMode } from '../../provision/artifacts.js';
import { kindCapacityChecks, kindPlatformChecks, kindPreflight, readKindPreflightInput } from './preflight.js';
import { requirePreflight, type PreflightCheck } from '../preflight.js';
import type { InotifyUse } from '../../host/facts.js';
import { kindReshapeRefusal, readKindState, type KindLabState, type KindRuntimeState } from './state.js';
import { engineForUp, readWithEngineOf, requireRecordedEngine, useEngineOf } from './lab-engine.js';
import type { RecordedEngine } from '../../host/engine.js';
import { runtimeUp } from '../base.js';
import { kindLabStatus } from './status.js';
import { kindProxyEnv } from './proxy-env.js';
import { releaseLeasesFromBeforeNodeStart } from './stale-leases.js';
import { notUpStatus } from '../not-up.js';
import { tcpProbeArgv } from '../tcp-probe.js';
import { detachRegistry, mirrorInNode, publishRegistryHosting, registryWithImages, type RegistryFacts } from '../../images/registry/index.js';

/** Options only the kind runtime reads (the CLI passes them with the common UpOptions, which carry nodeImage). */
interface KindUpOptions extends UpOptions {
  /** Images to push to the image registry besides the lab's own (labImages). */
  extraImages?: string[];
}

export interface KindContext {
  run: LabRun<KindRuntimeState>;
  config: LabConfig;
  options: KindUpOptions;
  dir: string;
  kind?: KindCli;
  collaborators?: Collaborators;
  plan?: KindLabPlan;
  /** kind clusters that already existed when this `up` started. */
  existing: Set<string>;
  /** The image registry, once the Image registry step has it running. */
  registry?: RegistryFacts;
  /** Lab images this `up` pushed or copied (new, or another build than the registry held). */
  pushed?: string[];
  /** Where images come from (the decision `up` made) and the lab's images by how they reach the registry. */
  sources?: ImageSources;
  labImages?: LabImageSet;
  /** New nodes pulling the lab's images in the background (started by the Registry mirrors step). */
  prepulls?: { done: Promise<string[]>; abort: AbortController };
  /** The engine the lab runs on, as the state records it (the preflight's: the lab's recorded one, else the one found). */
  engine?: RecordedEngine;
}

/** How long the Leader leases step waits for an API server a node restart took away. */
const LEASE_API_WAIT_MS = 180_000;

/** Where kind writes its own kubeconfigs (it insists on writing one); the lab's real ones are written by us. */
function kindScratchDir(dir: string): string {
  return path.join(dir, 'kind');
}

function semaphore(limit: number): <T>(job: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async (job) => {
    if (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await job();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}

/** Pods attach by `bridge` only on the node image built here; any other (kindest/node, one given with --node-image) has ptp, not bridge. */
function podNetworkOn(nodeImage: string, builtRef: string): PodNetwork {
  return nodeImage === builtRef ? 'bridge' : 'ptp';
}

/**
 * The node image a dry run plans with, without asking Docker or a registry: the one given; under `--artifacts official` kind's
 * published image for the lab's minor (by digest, as `up` pulls it; `up` builds one instead only on a cgroup v1 engine, which
 * a dry run does not ask about); otherwise the one built here.
 */
function plannedNodeImage(config: LabConfig, builtRef: string, options: { nodeImage?: string; artifacts?: ArtifactsMode }): string {
  if (options.nodeImage) return options.nodeImage;
  const official = options.artifacts === 'official' ? officialNodeImage(config.kubernetesVersion) : undefined;
  return official ? `${official.tag}@${official.digest}` : builtRef;
}

/** The plan of a lab, as --dry-run prints it and up follows it; `nodeImage` defaults to the one ocm-lab builds (kind's under `artifacts: official`). */
async function kindPlanFor(config: LabConfig, options: { nodeImage?: string; extraImages?: string[]; artifacts?: ArtifactsMode } = {}): Promise<KindLabPlan> {
  const collaborators = await loadCollaborators();
  const builtRef = collaborators.nodeImageName(config.kubernetesVersion);
  const nodeImage = plannedNodeImage(config, builtRef, options);
  return planKindLab(config, {
    labDir: labDir(config.name),
    nodeImage,
    podNetwork: podNetworkOn(nodeImage, builtRef),
    images: [...collaborators.labImages(config), ...(options.extraImages ?? [])],
    templates: await readKindTemplates(),
  });
}

async function createCluster(c: KindContext, cluster: KindClusterPlan, progress: (line: string) => void): Promise<string> {
  const kind = c.kind!;
  if (c.existing.has(cluster.kindName)) {
    const node = await inspectContainer(cluster.nodeContainer);
    if (!node)
      throw new Error(`kind lists cluster ${cluster.kindName} but its node container ${cluster.nodeContainer} does not exist; run 'ocm-lab down' and up again`);
    if (!node.State.Running) {
      progress(`starting stopped node ${cluster.nodeContainer}`);
      await docker(['start', cluster.nodeContainer]);
      return 'node restarted';
    }
    return 'exists';
  }
  await fs.mkdir(path.dirname(cluster.kindConfigFile), { recursive: true, mode: 0o700 });
  // Pods have no default route (nothing leaves the machine by accident); they reach their VPC's network: its nodes, the hub's endpoint, the node's DNS.
  const [network] = await inspectNetworks([cluster.network]);
  if (!network?.subnet) throw new Error(`network ${cluster.network} has no IPv4 subnet (${await engineCli()} network inspect ${cluster.network})`);
  await fs.writeFile(cluster.cniConflistFile, clusterConflist(c.plan!.podNetwork, cluster, network.subnet), { mode: 0o644 });
  await fs.writeFile(cluster.kindConfigFile, cluster.kindConfig, { mode: 0o600 });
  progress(`kind create cluster --name ${cluster.kindName} (network ${cluster.network})`);
  const started = Date.now();
  await kind.create(cluster.kindName, cluster.kindConfigFile, cluster.network, kindProxyEnv(process.env, c.plan!));
  return `created in ${((Date.now() - started) / 1000).toFixed(0)} s`;
}

/** A node container's IPv4 address on one network. */
async function nodeAddress(container: string, network: string): Promise<string> {
  const [node] = await dockerInspect<{ NetworkSettings?: { Networks?: Record<string, { IPAddress?: string }> } }>('container', [container]);
  const ip = node?.NetworkSettings?.Networks?.[network]?.IPAddress;
  if (!ip)
    throw new NotFoundError(`node container ${container} has no address on network ${network}`, { hint: "run 'ocm-lab up --runtime kind' to repair the lab" });
  return ip;
}

/**
 * One step per cluster, created side by side (the networks exist already, so kind does not race to make its own; #1596).
 * All creates start together and a failed one waits for the others to end before failing the step, so that the rollback's
 * `down` finds every cluster a create made (none is still being created behind it).
 */
function clusterSteps(c: KindContext): Step<KindContext>[] {
  const limit = semaphore(clusterCreateConcurrency(c.plan!.clusters.length));
  const progressOf = new Map<string, (line: string) => void>();
  let creates: Map<string, Promise<string>> | undefined;
  const startAll = (cc: KindContext) =>
    (creates ??= new Map(c.plan!.clusters.map((cl) => [cl.name, limit(() => createCluster(cc, cl, (line) => progressOf.get(cl.name)?.(line)))] as const)));
  return c.plan!.clusters.map((cluster) => ({
    title: `${cluster.name}: kind cluster ${cluster.kindName} on ${cluster.network}`,
    run: async (cc: KindContext, progress: (line: string) => void) => {
      progressOf.set(cluster.name, progress);
      const all = startAll(cc);
      try {
        return await all.get(cluster.name)!;
      } catch (err) {
        await Promise.allSettled(all.values());
        throw err;
      }
    },
  }));
}

/** The image registry every kind lab shares, on this lab's networks, holding the lab's images (pushed when it lacks them). */
const imageRegistryStep: Step<KindContext> = {
  title: 'Image registry',
  run: async (c, progress) => {
    const config = c.config;
    const images = {
      local: [...c.labImages!.local, ...(c.options.extraImages ?? [])],
      upstream: c.labImages!.upstream,
      buildUpstream: (p: (line: string) => void) => c.collaborators!.buildLabImages(config, p),
    };
    const r = await registryWithImages(c.plan!.imageRegistry.networks, images, c.sources!, progress);
    c.registry = r.facts;
    c.pushed = r.pushed;
    return r.summary;
  },
};

/**
 * Nodes pull from the registry: containerd's hosts.toml in each (a node that existed pulls again what this up pushed).
 * New nodes then pull the lab's images in the background while OCM installs (settled when `up` ends).
 */
const registryMirrorsStep: Step<KindContext> = {
  title: 'Registry mirrors',
  run: async (c, progress) => {
    const hosts = await Promise.all(
      c.plan!.clusters.map((cl) => mirrorInNode(cl.nodeContainer, c.registry!, c.plan!.images, c.existing.has(cl.kindName) ? (c.pushed ?? []) : [], progress)),
    );
    const fresh = c.plan!.clusters.filter((cl) => !c.existing.has(cl.kindName));
    if (fresh.length && !c.prepulls) {
      const abort = new AbortController();
      const nodes = fresh.map((cl) => ({ container: cl.nodeContainer, hub: cl.hub }));
      c.prepulls = { done: startPrepulls(nodes, c.plan!.images, c.config.ocmVersion, abort.signal), abort };
    }
    const pulling = fresh.length ? `; ${fresh.map((cl) => cl.name).join(', ')} pulling the lab's images meanwhile` : '';
    return `${(hosts[0] ?? []).join(', ')} → ${c.registry!.hostFromClusters} on ${c.plan!.clusters.length} nodes${pulling}`;
  },
};

/** KEP-1755: where tools (Tilt, Skaffold, ctlptl) find the registry, in every cluster. */
const registryHostingStep: Step<KindContext> = {
  title: 'Registry hosting',
  run: async (c) => {
    await Promise.all(c.plan!.clusters.map((cl) => publishRegistryHosting(clusterKubeconfigFile(c.config.name, cl.name), c.registry!)));
    return `ConfigMap kube-public/local-registry-hosting (host ${c.registry!.host}) in ${c.plan!.clusters.length} clusters`;
  },
};

/** Clusters whose node was already there: the leases their pods held before the node last started are freed (stale-leases.ts). */
const leaderLeasesStep: Step<KindContext> = {
  title: 'Leader leases',
  run: async (c, progress) => {
    const existing = c.plan!.clusters.filter((cl) => c.existing.has(cl.kindName));
    const released = await Promise.all(
      existing.map(async (cl) => {
        progress(`${cl.name}: leases held from before its node started`);
        const leases = await releaseLeasesFromBeforeNodeStart(clusterKubeconfigFile(c.config.name, cl.name), cl.nodeContainer, LEASE_API_WAIT_MS);
        return leases.length ? `${cl.name}: released ${leases.length} leader leases (${leases.join(', ')})` : '';
      }),
    );
    return released.filter(Boolean).join('; ') || 'none held by a process from before a node start';
  },
};

export class KindRuntime implements Runtime<KindContext, KindRuntimeState> {
  readonly name = 'kind';
  readonly keepsClusters = false;

  /** `nodeImage`: the lab file's runtime.kind.nodeImage (`up --node-image` overrides it). */
  constructor(private readonly nodeImage?: string) {}

  available(): Promise<{ available: boolean; reason: string | null }> {
    return kindAvailability();
  }

  reshapeRefusal(current: LabConfig, next: LabConfig): string | null {
    return kindReshapeRefusal(current, next);
  }

  initialState(): KindRuntimeState {
    return { nodeImage: '', images: [] };
  }

  provisioning(run: LabRun<KindRuntimeState>): Provisioning<KindContext> {
    const ctx: KindContext = { run, config: run.config, options: run.options, dir: run.dir, existing: new Set() };
    /** Docker and kind answer, and the machine can take the clusters this up adds (before anything is created). */
    const preflight = async (_fresh: string[], progress: (line: string) => void) => {
      // A bad setting is refused here, before the images step and any create.
      clusterCreateConcurrency(run.config.clusters.length);
      const { engine, record, note } = await engineForUp(run.config.name);
      ctx.engine = record;
      const what = "the lab's kind clusters";
      const input = await readKindPreflightInput({
        kubernetesVersion: run.config.kubernetesVersion,
        artifacts: ctx.options.artifacts ?? artifactsFromEnv(),
        nodeImage: ctx.options.nodeImage ?? this.nodeImage,
        newClusters: run.config.clusters.length,
        mirrors: ctx.options.mirrors,
      });
      // The platform first: kind is not fetched for an engine no node image runs on.
      requirePreflight(kindPlatformChecks(input), what);
      const binary = await requireKind({ binDir: ctx.options.binDir, artifacts: ctx.options.artifacts, mirrors: ctx.options.mirrors, onProgress: progress });
      ctx.kind = new KindCli(binary, kindScratchDir(ctx.dir), await currentEngine());
      ctx.existing = new Set(await ctx.kind.clusters());
      const fresh = run.config.clusters.filter((cl) => !ctx.existing.has(kindClusterName(run.config.name, cl.name)));
      const warning = requirePreflight(kindCapacityChecks({ ...input, newClusters: fresh.length }), what);
      return `engine: ${engine}, kind ${binary}${warning ? `; ${warning}` : ''}${note ? `; ${note}` : ''}`;
    };
    const deleteClusters = async (removed: string[], progress: (line: string) => void) => {
      for (const name of removed) {
        const kindName = kindClusterName(run.config.name, name);
        progress(`deleting kind cluster ${kindName}`);
        await ctx.kind!.delete(kindName);
        ctx.existing.delete(kindName);
        await fs.rm(path.join(ctx.dir, 'clusters', name), { recursive: true, force: true });
      }
    };
    const steps: Step<KindContext>[] = [
      {
        title: 'Images',
        run: async (c, progress) => {
          c.config = c.run.config;
          c.collaborators = await loadCollaborators();
          c.sources = { artifacts: c.options.artifacts ?? artifactsFromEnv(), mirrors: c.options.mirrors ?? NO_MIRRORS };
          const given = c.options.nodeImage ?? this.nodeImage;
          const builtRef = c.collaborators.nodeImageName(c.config.kubernetesVersion);
          const ensured = given
            ? { ref: given, line: 'node image: as given', built: given === builtRef }
            : await c.collaborators.ensureNodeImage(c.config, c.sources, progress);
          // kind is given the name the engine stores a built image under (on Podman: localhost/…).
          const node = ensured.built ? { ...ensured, ref: (await currentEngine()).storedImageRef(ensured.ref) } : ensured;
          c.labImages = await c.collaborators.ensureLabImages(c.config, c.sources, progress);
          const images = [...c.collaborators.labImages(c.config), ...(c.options.extraImages ?? [])];
          const podNetwork: PodNetwork = node.built ? 'bridge' : 'ptp';
          c.plan = planKindLab(c.config, { labDir: c.dir, nodeImage: node.ref, podNetwork, images, templates: await readKindTemplates() });
          c.run.state.runtimeState = { nodeImage: node.ref, images: c.plan.images, ...(c.engine ? { engine: c.engine } : {}) };
          await c.run.save();
          const copied = c.labImages.upstream.length ? ` (${c.labImages.upstream.length} from their registries)` : '';
          const count = `${c.plan.images.length} lab image${c.plan.images.length === 1 ? '' : 's'}${copied}`;
          return `node ${node.ref} (${node.line.replace(/^node image: /, '')}); ${count}`;
        },
      },
      {
        title: 'Networks',
        run: async (c) => {
          const results = [];
          for (const n of c.plan!.networks) results.push(`${n.name} ${await ensureNetwork(n)}`);
          return results.join(', ');
        },
      },
      {
        // The registry is filled while the nodes boot: neither needs the other until the Registry mirrors step.
        title: 'Clusters and image registry',
        concurrent: true,
        children: (c) => [imageRegistryStep, ...clusterSteps(c)],
      },
      {
        title: 'Hub endpoint',
        run: async (c, progress) => `${c.plan!.hubEndpoint.name}: ${await ensureHubEndpoint(c.plan!.hubEndpoint, progress)}`,
      },
      registryMirrorsStep,
      {
        title: 'Node routes',
        run: async (c) => {
          await Promise.all(c.plan!.clusters.map((cluster) => ensureNodeEgressGuards(cluster.nodeContainer, cluster)));
          const first = c.plan!.clusters[0];
          return `blackhole ${first?.blackholes.join(', ') ?? ''}, reject ${first?.rejected.join(', ') ?? ''} on every node`;
        },
      },
      {
        title: 'Kubeconfigs',
        run: async (c) => {
          const entries = await Promise.all(
            c.plan!.clusters.map(async (cluster) => entryFromKindKubeconfig(await c.kind!.kubeconfig(cluster.kindName), cluster.name)),
          );
          await writeLabKubeconfigs(c.config.name, entries, c.plan!.clusters.find((x) => x.hub)!.name);
          return `contexts ${entries.map((e) => e.name).join(', ')}`;
        },
      },
      leaderLeasesStep,
      registryHostingStep,
    ];
    const settle = async (cancel: boolean) => {
      if (cancel) ctx.prepulls?.abort.abort();
      await ctx.prepulls?.done;
    };
    return { context: ctx, steps, preflight, deleteClusters, settle };
  }

  async clusters(config: LabConfig): Promise<LabCluster[]> {
    const state = await readKindState(config.name);
    if (!state)
      throw new NotFoundError(`lab '${config.name}' is not up on kind (no state in ${labDir(config.name)})`, { hint: "run 'ocm-lab up --runtime kind' first" });
    readWithEngineOf(config.name, state);
    const endpoint = hubEndpointName(config.name);
    return Promise.all(
      config.clusters.map(async (cl) => {
        const kubeconfig = clusterKubeconfigFile(config.name, cl.name);
        const text = await fs.readFile(kubeconfig, 'utf8').catch(() => {
          throw new NotFoundError(`lab '${config.name}': cluster ${cl.name} has no kubeconfig at ${kubeconfig}`, {
            hint: "run 'ocm-lab up --runtime kind' to repair the lab",
          });
        });
        // The hub by its endpoint's name (every VPC network resolves it); a spoke by its node's address on its VPC
        // network, so that a connection from another VPC is refused by the network, not by a name it cannot resolve.
        const address = cl.hub ? endpoint : await nodeAddress(nodeContainerName(config.name, cl.name), vpcNetworkName(config.name, cl.vpc));
        return {
          name: cl.name,
          vpc: cl.vpc,
          hub: cl.hub,
          kubeconfig,
          internalServer: `https://${address}:6443`,
          internalAddress: address,
          caPem: entryFromKindKubeconfig(text, cl.name).caPem,
        };
      }),
    );
  }

  /** Every kind cluster of the lab: the state's, and any kind node on the lab's networks (a crash may have lost the state). */
  private async labKindClusters(lab: string, state: KindLabState | null, networks: readonly string[]): Promise<string[]> {
    const names = new Set((state?.config.clusters ?? []).map((c) => kindClusterName(lab, c.name)));
    const facts = await inspectNetworks(networks);
    const containers = facts.flatMap((n) => Object.keys(n.containers));
    const inspected = await dockerInspect<{ Config: { Labels: Record<string, string> | null } }>('container', containers);
    for (const c of inspected) {
      const cluster = c.Config.Labels?.[KIND_CLUSTER_LABEL];
      if (cluster) names.add(cluster);
    }
    return [...names];
  }

  async down(labName: string, options: DownOptions): Promise<DownResult> {
    const dir = labDir(labName);
    const state = await readKindState(labName);
    const existedDir = (await fs.stat(dir).catch(() => null)) !== null;
    const result: DownResult = { lab: labName, existed: state !== null || existedDir, removed: [], keptData: !!options.keepData };
    // The lab's objects are in the engine it was brought up with; a state without one (older, or lost) takes the one found now.
    const { recorded, note } = useEngineOf(labName, state);
    if (recorded) await requireRecordedEngine(labName, recorded, 'down');
    if (note) process.stderr.write(`${note}\n`);
    const engine = await dockerEngine();
    if (!engine.available) {
      throw new MissingPrerequisiteError(`lab '${labName}' runs on kind, and no container engine answers to take it down: ${engine.reason}`, {
        hint:
          'start the engine the lab was brought up with (Docker, or Podman with OCM_LAB_ENGINE=podman), ' +
          'check its `version` answers, then run ocm-lab down again',
      });
    }
    const networks = await labNetworks(labName);
    const binary = await locateKind();
    const kindClusters = await this.labKindClusters(labName, state, networks);
    if (kindClusters.length) {
      if (!binary)
        throw new NotFoundError(`lab '${labName}' has kind clusters (${kindClusters.join(', ')}) and no kind CLI was found to delete them`, {
          hint: 'set OCM_LAB_KIND=/path/to/kind, or delete them with: kind delete cluster --name NAME',
        });
      const kind = new KindCli(binary, kindScratchDir(dir), await currentEngine());
      const present = new Set(await kind.clusters());
      for (const name of kindClusters.filter((n) => present.has(n))) {
        await kind.delete(name);
        result.removed.push(`kind cluster ${name}`);
      }
    }
    if (await removeContainer(hubEndpointName(labName))) result.removed.push(`container ${hubEndpointName(labName)}`);
    // The image registry is every lab's: it only leaves this lab's networks (its data is the cache `ocm-lab registry rm` removes).
    await detachRegistry(networks);
    for (const n of networks) if (await removeNetwork(n)) result.removed.push(`network ${n}`);
    if (!options.keepData) await fs.rm(dir, { recursive: true, force: true });
    return result;
  }

  /** A TCP connect from inside the cluster's node container (its pods share the node's routes and networks). */
  async plan(config: LabConfig, options: PlanOptions): Promise<RuntimePlan> {
    const nodeImage = options.nodeImage ?? this.nodeImage;
    const plan = await kindPlanFor(config, { ...(nodeImage ? { nodeImage } : {}), ...(options.artifacts ? { artifacts: options.artifacts } : {}) });
    return {
      runtime: 'kind',
      steps: options.action === 'up' ? runtimeUp(this, config, {}).steps.map((s) => s.title) : [],
      plan,
      text: renderKindPlan(plan, options.action, (await currentEngine()).title),
    };
  }

  async preflight(config: LabConfig, options: PlanOptions & { newClusters: number }): Promise<PreflightCheck[]> {
    const nodeImage = options.nodeImage ?? this.nodeImage;
    const input = await readKindPreflightInput(
      {
        kubernetesVersion: config.kubernetesVersion,
        artifacts: options.artifacts ?? artifactsFromEnv(),
        newClusters: options.newClusters,
        ...(nodeImage ? { nodeImage } : {}),
      },
      options.host,
      options.facts?.inotifyInUse as InotifyUse | undefined,
    );
    return kindPreflight(input);
  }

  async probe(config: LabConfig, from: string, target: { host: string; port: number }, timeoutMs: number): Promise<boolean> {
    if (!config.clusters.some((c) => c.name === from)) throw new NotFoundError(`lab '${config.name}' has no cluster '${from}'`);
    readWithEngineOf(config.name, await readKindState(config.name));
    const r = await docker(['exec', nodeContainerName(config.name, from), ...tcpProbeArgv(target, timeoutMs)], { allowFailure: true });
    return r.exitCode === 0;
  }

  async status(config: LabConfig): Promise<LabStatus> {
    const state = await readKindState(config.name);
    if (!state) return notUpStatus(config.name, 'kind');
    readWithEngineOf(config.name, state);
    return kindLabStatus(state.config);
  }
}
