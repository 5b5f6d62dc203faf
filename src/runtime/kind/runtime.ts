import fs from 'node:fs/promises';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import type { LabConfig } from '../../config/index.js';
import { ConflictError, MissingPrerequisiteError, NotFoundError } from '../../errors.js';
import { clusterKubeconfigFile, labDir } from '../../paths.js';
import type { DownOptions, DownResult, LabCluster, LabStatus, PlanOptions, Runtime, RuntimePlan, Step, UpOptions } from '../types.js';
import { renderKindPlan } from './dry-run.js';
import { loadCollaborators, type Collaborators } from './collaborators.js';
import { kindAvailability } from './availability.js';
import { docker, dockerEngine, dockerInspect, requireDockerEngine } from './docker.js';
import { ensureHubEndpoint, inspectContainer, removeContainer } from './hub-endpoint.js';
import { readKindTemplates } from './kind-config.js';
import { KindCli, locateKind, requireKind } from './kind-cli.js';
import { entryFromKindKubeconfig, writeLabKubeconfigs } from './kubeconfigs.js';
import { hubEndpointName, KIND_CLUSTER_LABEL, kindClusterName, nodeContainerName, vpcNetworkName } from './names.js';
import { ensureNetwork, inspectNetworks, labNetworks, removeNetwork } from './networks.js';
import { ensureNodeEgressGuards } from './node-routes.js';
import { CLUSTER_CREATE_CONCURRENCY, planKindLab, type KindClusterPlan, type KindLabPlan } from './plan.js';
import { readHostFacts, requireHostFits } from './preflight.js';
import { kindReshapeRefusal, readKindState, writeKindState, type KindLabState } from './state.js';
import { kindLabStatus } from './status.js';
import { notUpStatus } from '../not-up.js';
import { tcpProbeArgv } from '../tcp-probe.js';

/** Options only the kind runtime reads (the CLI passes them with the common UpOptions, which carry nodeImage). */
export interface KindUpOptions extends UpOptions {
  /** Images to `kind load` besides the lab's own (labImages). */
  extraImages?: string[];
}

export interface KindContext {
  config: LabConfig;
  options: KindUpOptions;
  dir: string;
  createdNow: boolean;
  releaseLock?: () => Promise<void>;
  kind?: KindCli;
  collaborators?: Collaborators;
  plan?: KindLabPlan;
  /** kind clusters that already existed when this `up` started. */
  existing: Set<string>;
}

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

/** The plan of a lab, as --dry-run prints it and up follows it; `nodeImage` defaults to the one ocm-lab builds. */
export async function kindPlanFor(config: LabConfig, options: { nodeImage?: string; extraImages?: string[] } = {}): Promise<KindLabPlan> {
  const collaborators = await loadCollaborators();
  return planKindLab(config, {
    labDir: labDir(config.name),
    nodeImage: options.nodeImage ?? collaborators.nodeImageName(config.kubernetesVersion),
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
  if (!network?.subnet) throw new Error(`Docker network ${cluster.network} has no IPv4 subnet (docker network inspect ${cluster.network})`);
  await fs.writeFile(cluster.cniConflistFile, c.collaborators!.cniConflist(cluster.podSubnet, cluster.serviceSubnet, [network.subnet]), { mode: 0o644 });
  await fs.writeFile(cluster.kindConfigFile, cluster.kindConfig, { mode: 0o600 });
  progress(`kind create cluster --name ${cluster.kindName} (network ${cluster.network})`);
  const started = Date.now();
  await kind.create(cluster.kindName, cluster.kindConfigFile, cluster.network);
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

export class KindRuntime implements Runtime<KindContext> {
  readonly name = 'kind' as const;
  readonly keepsClusters = false;

  available(): Promise<{ available: boolean; reason: string | null }> {
    return kindAvailability();
  }

  upSteps(config: LabConfig, options: KindUpOptions): { context: KindContext; steps: Step<KindContext>[]; rollback: () => Promise<void> } {
    const ctx: KindContext = { config, options, dir: labDir(config.name), createdNow: false, existing: new Set() };
    const steps: Step<KindContext>[] = [
      {
        title: 'Checks',
        run: async (c, progress) => {
          const server = await requireDockerEngine();
          const binary = await requireKind({ binDir: c.options.binDir, allowDownload: c.options.allowDownload, onProgress: progress });
          c.kind = new KindCli(binary, kindScratchDir(c.dir));
          c.existing = new Set(await c.kind.clusters());
          const fresh = c.config.clusters.filter((cl) => !c.existing.has(kindClusterName(c.config.name, cl.name)));
          requireHostFits(await readHostFacts(), fresh.length);
          await fs.mkdir(c.dir, { recursive: true, mode: 0o700 });
          try {
            c.releaseLock = await lockfile.lock(c.dir, { lockfilePath: path.join(c.dir, '.lock'), stale: 30_000, retries: 0 });
          } catch (err) {
            throw new ConflictError(`another ocm-lab command is working on lab '${c.config.name}' (${c.dir}/.lock is held)`, {
              hint: 'wait for it to finish, then run the command again',
              cause: err,
            });
          }
          const previous = await readKindState(c.config.name);
          const other = await fs.readFile(path.join(c.dir, 'state.json'), 'utf8').then(
            () => !previous,
            () => false,
          );
          if (other)
            throw new ConflictError(`lab '${c.config.name}' exists and was not brought up with the kind runtime`, {
              hint: `run 'ocm-lab down' first, or give the lab another name`,
            });
          const refusal = previous ? kindReshapeRefusal(previous.config, c.config) : null;
          if (refusal) {
            throw new ConflictError(`lab '${c.config.name}' already exists and ${refusal}; up only adds and removes spokes of a running lab`, {
              hint: `run 'ocm-lab down${c.config.source ? ` --config ${c.config.source}` : ''}' first, or give the new lab another name`,
            });
          }
          c.createdNow = !previous;
          const removed = previous ? previous.config.clusters.filter((x) => !c.config.clusters.some((y) => y.name === x.name)) : [];
          if (previous && removed.length) {
            const all = await this.clusters(previous.config);
            await c.options.beforeRemove?.(
              all.filter((x) => removed.some((r) => r.name === x.name)),
              all,
              progress,
            );
            for (const r of removed) {
              progress(`deleting kind cluster ${kindClusterName(c.config.name, r.name)}`);
              await c.kind.delete(kindClusterName(c.config.name, r.name));
              c.existing.delete(kindClusterName(c.config.name, r.name));
              await fs.rm(path.join(c.dir, 'clusters', r.name), { recursive: true, force: true });
            }
          }
          const state: KindLabState = previous ?? {
            version: 1,
            lab: c.config.name,
            runtime: 'kind',
            createdAt: new Date().toISOString(),
            config: c.config,
            nodeImage: '',
            images: [],
          };
          state.config = c.config;
          await writeKindState(state);
          return `Docker ${server}, kind ${binary}${removed.length ? `; removed ${removed.map((r) => r.name).join(', ')}` : ''}`;
        },
      },
      {
        title: 'Images',
        run: async (c, progress) => {
          c.collaborators = await loadCollaborators();
          const nodeImage = c.options.nodeImage ?? (await c.collaborators.ensureNodeImage(c.config.kubernetesVersion, progress));
          const images = [...(await c.collaborators.ensureLabImages(c.config, progress)), ...(c.options.extraImages ?? [])];
          c.plan = planKindLab(c.config, { labDir: c.dir, nodeImage, images, templates: await readKindTemplates() });
          const state = await readKindState(c.config.name);
          if (state) await writeKindState({ ...state, nodeImage, images: c.plan.images });
          return `node ${nodeImage}; ${c.plan.images.length} lab image${c.plan.images.length === 1 ? '' : 's'}`;
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
        title: 'Clusters',
        concurrent: true,
        children: (c) => {
          const limit = semaphore(CLUSTER_CREATE_CONCURRENCY);
          return c.plan!.clusters.map((cluster) => ({
            title: `${cluster.name}: kind cluster ${cluster.kindName} on ${cluster.network}`,
            run: (cc: KindContext, progress: (line: string) => void) => limit(() => createCluster(cc, cluster, progress)),
          }));
        },
      },
      {
        title: 'Hub endpoint',
        run: async (c, progress) => `${c.plan!.hubEndpoint.name}: ${await ensureHubEndpoint(c.plan!.hubEndpoint, progress)}`,
      },
      {
        title: 'Load images',
        run: async (c, progress) => {
          if (!c.plan!.images.length) return 'no images to load';
          // kind skips an image a node already has (it asks the node's crictl), so a warm run only checks.
          await Promise.all(
            c.plan!.clusters.map(async (cluster) => {
              progress(`kind load docker-image --name ${cluster.kindName} (${c.plan!.images.length} images)`);
              await c.kind!.loadImages(cluster.kindName, c.plan!.images);
            }),
          );
          return `${c.plan!.images.join(', ')} on ${c.plan!.clusters.length} nodes`;
        },
      },
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
    ];
    const rollback = async () => {
      if (ctx.createdNow && !options.retain) await this.down(config.name, {});
    };
    return { context: ctx, steps, rollback };
  }

  async clusters(config: LabConfig): Promise<LabCluster[]> {
    const state = await readKindState(config.name);
    if (!state)
      throw new NotFoundError(`lab '${config.name}' is not up on kind (no state in ${labDir(config.name)})`, { hint: "run 'ocm-lab up --runtime kind' first" });
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
    const result: DownResult = {
      lab: labName,
      existed: state !== null || existedDir,
      stoppedProcesses: [],
      removedNetworkResources: 0,
      keptData: !!options.keepData,
    };
    const engine = await dockerEngine();
    if (!engine.available) {
      throw new MissingPrerequisiteError(`lab '${labName}' runs on kind, and no Docker engine answers to take it down: ${engine.reason}`, {
        hint: 'start Docker, check `docker version` answers, then run ocm-lab down again',
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
      const kind = new KindCli(binary, kindScratchDir(dir));
      const present = new Set(await kind.clusters());
      for (const name of kindClusters.filter((n) => present.has(n))) {
        await kind.delete(name);
        result.stoppedProcesses.push(`kind cluster ${name}`);
      }
    }
    if (await removeContainer(hubEndpointName(labName))) result.stoppedProcesses.push(`container ${hubEndpointName(labName)}`);
    for (const n of networks) if (await removeNetwork(n)) result.removedNetworkResources++;
    if (!options.keepData) await fs.rm(dir, { recursive: true, force: true });
    return result;
  }

  /** A TCP connect from inside the cluster's node container (its pods share the node's routes and networks). */
  async plan(config: LabConfig, options: PlanOptions): Promise<RuntimePlan> {
    const plan = await kindPlanFor(config, { nodeImage: options.nodeImage });
    return {
      runtime: 'kind',
      steps: options.action === 'up' ? this.upSteps(config, {}).steps.map((s) => s.title) : [],
      plan,
      text: renderKindPlan(plan, options.action),
    };
  }

  async probe(config: LabConfig, from: string, target: { host: string; port: number }, timeoutMs: number): Promise<boolean> {
    if (!config.clusters.some((c) => c.name === from)) throw new NotFoundError(`lab '${config.name}' has no cluster '${from}'`);
    const r = await docker(['exec', nodeContainerName(config.name, from), ...tcpProbeArgv(target, timeoutMs)], { allowFailure: true });
    return r.exitCode === 0;
  }

  async status(config: LabConfig): Promise<LabStatus> {
    const state = await readKindState(config.name);
    if (!state) return notUpStatus(config.name, 'kind');
    return kindLabStatus(state.config);
  }
}
