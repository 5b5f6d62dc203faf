import fs from 'node:fs/promises';
import path from 'node:path';
import type { LabConfig } from '../../config/index.js';
import { ConflictError, InvalidInputError, MissingPrerequisiteError } from '../../errors.js';
import { ExecCredentialError } from '../../kube/exec-credential.js';
import { KubeClient } from '../../kube/client.js';
import { readyz, withTimeout } from '../../kube/readyz.js';
import { writeKubeconfig } from '../../kube/kubeconfig.js';
import { getOrNull, type KubeObject } from '../../kube/objects.js';
import { clusterKubeconfigFile, labDir, labKubeconfigFile } from '../../paths.js';
import type { ClusterStatus, DownOptions, DownResult, LabCluster, LabRun, LabStatus, PlanOptions, Provisioning, Runtime, RuntimePlan, Step } from '../types.js';
import { existingRuntimePlan } from './dry-run.js';
import { clusterSpecs, resolveContext, type ExistingClusterSpec, type ExistingClustersInput, type ResolvedContext } from './contexts.js';
import { readExistingState, type ExistingLabState, type ExistingRuntimeState } from './state.js';
import { runtimeUp } from '../base.js';
import { OCM_LAB_IMAGE } from '../../images/catalogue.js';
import { checkImages, imagesToCheck } from '../../images/cluster-check.js';
import { pushOurImage } from '../../images/user-registry.js';
import { chooseHubServer } from './hub-server.js';

/** All clusters of a lab on existing clusters are in one "VPC": the network between them is the user's. */
const EXISTING_VPC = 'existing';
const ISOLATION = { enforced: false, reason: 'existing clusters: the network between them is yours' };
const ANSWER_TIMEOUT_MS = 10_000;
/** How long the image check waits for a cluster's pod: pulls of OCM's five images on a fresh node take a minute or two. */
const IMAGE_CHECK_TIMEOUT_MS = Number(process.env.OCM_LAB_IMAGE_CHECK_TIMEOUT_MS) || 240_000;

/** The lab config of a lab on existing clusters: name, versions and addons from the lab file (or the defaults), clusters from the contexts. */
export function existingLabConfig(base: LabConfig, specs: readonly ExistingClusterSpec[]): LabConfig {
  return { ...base, network: {}, vpcs: [{ name: EXISTING_VPC }], clusters: specs.map((s) => ({ name: s.name, vpc: EXISTING_VPC, hub: s.hub })) };
}

interface ExistingContext {
  run: LabRun<ExistingRuntimeState>;
  specs: ExistingClusterSpec[];
  kubeconfig: string;
  resolved: Map<string, ResolvedContext>;
  /** Our image as the clusters' pods pull it: REG/ocm-lab:<version> with --image-registry, else OCM_LAB_IMAGE. */
  ocmLabImage: string;
  /** The hub's API server as the spokes reach it, when not the hub context's server. */
  hubServer?: string;
  /** The runtime's steps ran through: from then on OCM may be on the clusters, and a failed up keeps the lab for `down`. */
  recorded: boolean;
}

/** A context's credential plugin that fails is bad input (log in again), not a cluster that does not answer. */
function pluginFailure(err: unknown): never {
  if (err instanceof ExecCredentialError) {
    throw new InvalidInputError(err.message, {
      hint: 'run the plugin of that context yourself (kubectl --context CTX get --raw /readyz) and fix what it says',
    });
  }
  throw err;
}

/** Why the hub cannot take the lab's OCM hub: another ClusterManager or its CRD is there (null when the hub is free). */
async function otherHub(endpoint: ResolvedContext['endpoint']): Promise<string | null> {
  const client = new KubeClient(endpoint);
  try {
    const crd = await getOrNull<KubeObject>(
      client,
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/clustermanagers.operator.open-cluster-management.io',
    );
    if (!crd) return null;
    const list = await client
      .get<{ items: KubeObject[] }>('/apis/operator.open-cluster-management.io/v1/clustermanagers')
      .catch(() => ({ items: [] as KubeObject[] }));
    const managers = list.items.map((i) => i.metadata.name);
    return (
      `CRD clustermanagers.operator.open-cluster-management.io exists (created ${crd.metadata.creationTimestamp ?? '?'})` +
      `${managers.length ? ` and ClusterManager ${managers.join(', ')}` : ''}`
    );
  } finally {
    client.close();
  }
}

/**
 * With `--image-registry`, our image built here and pushed there; then, before anything is installed, every cluster
 * runs the lab's images (a cluster that cannot pull one would be left with OCM half-up).
 */
function imageSteps(registry: string | undefined): Step<ExistingContext>[] {
  return [
    ...(registry
      ? [
          {
            title: `Existing clusters: our image pushed to ${registry}`,
            run: async (c: ExistingContext, progress: (line: string) => void) => (c.ocmLabImage = await pushOurImage(registry, progress)),
          },
        ]
      : []),
    {
      // Before anything is installed: a cluster that cannot pull an image would leave OCM half-up there.
      title: 'Existing clusters: every cluster runs the lab images',
      run: async (c, progress) => {
        if (!registry && c.run.previous?.runtimeState.ocmLabImage) c.ocmLabImage = c.run.previous.runtimeState.ocmLabImage;
        const targets = c.specs.map((spec) => ({
          cluster: spec.name,
          context: spec.context,
          endpoint: c.resolved.get(spec.name)!.endpoint,
          images: imagesToCheck(c.ocmLabImage, c.run.config.ocmVersion, spec.hub),
        }));
        return checkImages(targets, IMAGE_CHECK_TIMEOUT_MS, progress);
      },
    },
  ];
}

/**
 * Clusters the user already has (any conformant Kubernetes), reached through
 * contexts of their kubeconfig. `up` checks every context answers and that the
 * hub runs no other OCM hub, then records the contexts and writes the lab's
 * kubeconfig files; it creates and deletes no cluster. `down` removes only the
 * lab directory: the lifecycle takes OCM and the addons off the clusters first.
 */
export class ExistingRuntime implements Runtime<ExistingContext, ExistingRuntimeState> {
  readonly name = 'existing';
  readonly keepsClusters = true;

  /** `input` comes from `up`'s flags; without it `up` reuses what the lab recorded. */
  constructor(private readonly input?: ExistingClustersInput) {}

  async available(): Promise<{ available: boolean; reason: string | null }> {
    return { available: true, reason: null };
  }

  resolveConfig(config: LabConfig, previous: ExistingLabState | null): LabConfig {
    if (this.input) return existingLabConfig(config, clusterSpecs(this.input));
    if (previous) return existingLabConfig(config, previous.runtimeState.clusters);
    throw new InvalidInputError('--runtime existing needs --kubeconfig FILE, --hub-context CTX and --spoke-context CTX (one per spoke)');
  }

  /** Spokes may come and go; the hub stays (its context is checked against the recorded one when the contexts are read). */
  reshapeRefusal(current: LabConfig, next: LabConfig): string | null {
    const [was, now] = [current.clusters.find((c) => c.hub), next.clusters.find((c) => c.hub)];
    return was && now && was.name !== now.name ? `its hub is ${was.name}, and the hub of a lab cannot change (asked: ${now.name})` : null;
  }

  initialState(): ExistingRuntimeState {
    return this.input ? { kubeconfig: path.resolve(this.input.kubeconfig), clusters: clusterSpecs(this.input) } : { kubeconfig: '', clusters: [] };
  }

  provisioning(run: LabRun<ExistingRuntimeState>): Provisioning<ExistingContext> {
    const ctx: ExistingContext = { run, specs: [], kubeconfig: '', resolved: new Map(), ocmLabImage: OCM_LAB_IMAGE, recorded: false };
    const registry = this.input?.imageRegistry;
    const steps: Step<ExistingContext>[] = [
      {
        title: 'Existing clusters: contexts answer',
        run: async (c, progress) => {
          const previous = c.run.previous;
          if (this.input) {
            c.kubeconfig = path.resolve(this.input.kubeconfig);
            c.specs = clusterSpecs(this.input);
          } else if (previous) {
            c.kubeconfig = previous.runtimeState.kubeconfig;
            c.specs = previous.runtimeState.clusters;
          }
          const [was, now] = [previous?.runtimeState.clusters.find((s) => s.hub), c.specs.find((s) => s.hub)];
          if (was && now && (was.name !== now.name || was.context !== now.context)) {
            throw new ConflictError(
              `lab '${c.run.config.name}' has the hub ${was.name} (context ${was.context}), ` +
                `and the hub of a lab cannot change (asked: ${now.name}, context ${now.context})`,
              { hint: `run 'ocm-lab down' first, or give the new lab another name` },
            );
          }
          for (const spec of c.specs) c.resolved.set(spec.name, await resolveContext(c.kubeconfig, spec.context));
          const answers = await Promise.all(
            c.specs.map(async (spec) => {
              progress(`asking ${spec.context}`);
              return { spec, ...(await readyz(c.resolved.get(spec.name)!.endpoint, ANSWER_TIMEOUT_MS).catch(pluginFailure)) };
            }),
          );
          const silent = answers.filter((a) => !a.ok);
          if (silent.length) {
            const said = silent.map(
              (a) => `context '${a.spec.context}' (${c.resolved.get(a.spec.name)!.endpoint.server}) does not answer GET /readyz with ok: ${a.said}`,
            );
            throw new InvalidInputError(said.join('\n'), { hint: `check it with: kubectl --kubeconfig ${c.kubeconfig} --context CTX get --raw /readyz` });
          }
          return c.specs.map((s) => `${s.name}${s.name === s.context ? '' : ` (${s.context})`}`).join(', ');
        },
      },
      {
        title: 'Existing clusters: hub runs no other OCM hub',
        run: async (c) => {
          const hub = c.specs.find((s) => s.hub)!;
          const hubEndpoint = c.resolved.get(hub.name)!.endpoint;
          // A hub this lab installed earlier is ours to repair.
          const previous = c.run.previous?.runtimeState;
          const ours = previous?.clusters.some((s) => s.hub && s.context === hub.context) && previous.kubeconfig === c.kubeconfig;
          if (ours) return 'the lab installed its hub before';
          const other = await otherHub(hubEndpoint);
          if (other) {
            throw new InvalidInputError(`context '${hub.context}' already runs an OCM hub that this lab did not install: ${other}`, {
              hint: 'use a cluster without OCM as the hub, or remove that hub first (clusteradm clean)',
            });
          }
          return 'no OCM hub there';
        },
      },
      {
        title: 'Existing clusters: the hub as spokes reach it',
        run: async (c) => {
          const hub = c.specs.find((s) => s.hub)!;
          const endpoint = c.resolved.get(hub.name)!.endpoint;
          const given = this.input ? this.input.hubServer : c.run.previous?.runtimeState.hubServer;
          const choice = await chooseHubServer(given, hub.context, endpoint);
          if (choice.server !== endpoint.server) c.hubServer = choice.server;
          return `${choice.server}: ${choice.why}`;
        },
      },
      ...imageSteps(registry),
      {
        title: 'Existing clusters: lab state and kubeconfigs',
        run: async (c) => {
          const name = c.run.config.name;
          c.run.state.runtimeState = {
            kubeconfig: c.kubeconfig,
            clusters: c.specs,
            ...(c.ocmLabImage !== OCM_LAB_IMAGE ? { ocmLabImage: c.ocmLabImage } : {}),
            ...(c.hubServer ? { hubServer: c.hubServer } : {}),
          };
          await c.run.save();
          const entries = c.specs.map((s) => ({ name: s.name, ...c.resolved.get(s.name)!.entry }));
          await writeKubeconfig(labKubeconfigFile(name), entries, c.specs.find((s) => s.hub)!.name);
          for (const entry of entries) await writeKubeconfig(clusterKubeconfigFile(name, entry.name), [entry]);
          c.recorded = true;
          return labKubeconfigFile(name);
        },
      },
    ];
    return {
      context: ctx,
      steps,
      // The clusters are the user's: leaving the lab is all (OCM let them go in beforeRemove).
      deleteClusters: async () => undefined,
      // A new lab whose contexts were refused keeps nothing; once recorded, OCM may be half-installed on the clusters,
      // and only `down` (which needs the state) takes it off.
      rollback: async () => {
        if (!ctx.recorded) await fs.rm(labDir(run.config.name), { recursive: true, force: true });
      },
    };
  }

  async clusters(config: LabConfig): Promise<LabCluster[]> {
    const state = await readExistingState(config.name);
    if (!state)
      throw new InvalidInputError(
        `lab '${config.name}' is not a lab on existing clusters (no ${path.join(labDir(config.name), 'state.json')} with runtime existing)`,
      );
    return Promise.all(
      state.runtimeState.clusters.map(async (spec) => {
        const kubeconfig = clusterKubeconfigFile(config.name, spec.name);
        const { endpoint } = await resolveContext(kubeconfig, spec.name);
        // The hub as spokes reach it (--hub-server, or kind's internal endpoint); a spoke's own server is what the hub dials.
        const server = (spec.hub && state.runtimeState.hubServer) || endpoint.server;
        return {
          name: spec.name,
          vpc: EXISTING_VPC,
          hub: spec.hub,
          kubeconfig,
          internalServer: server,
          internalAddress: new URL(server).hostname.replace(/^\[|\]$/g, ''),
          caPem: endpoint.caPem,
          ...(state.runtimeState.ocmLabImage ? { ocmLabImage: state.runtimeState.ocmLabImage } : {}),
        };
      }),
    );
  }

  async down(labName: string, options: DownOptions): Promise<DownResult> {
    const dir = labDir(labName);
    const existed = await fs.access(dir).then(
      () => true,
      () => false,
    );
    if (existed && !options.keepData) await fs.rm(dir, { recursive: true, force: true });
    return { lab: labName, existed, removed: existed && !options.keepData ? [labDir(labName)] : [], keptData: !!options.keepData };
  }

  async plan(config: LabConfig, options: PlanOptions): Promise<RuntimePlan> {
    const previous = options.action === 'up' ? await readExistingState(config.name) : null;
    const resolved = options.action === 'up' && (this.input || previous) ? this.resolveConfig(config, previous) : config;
    const steps = runtimeUp(this, resolved, {}).steps.map((s) => s.title);
    return { ...(await existingRuntimePlan(resolved, options, this.input, steps)), config: resolved };
  }

  async probe(config: LabConfig, from: string): Promise<boolean> {
    throw new MissingPrerequisiteError(`cannot probe from ${from}: the existing runtime has no way into the networks of clusters it did not create`, {
      hint: `lab '${config.name}' runs on existing clusters; check reachability with a pod of your own`,
    });
  }

  async status(config: LabConfig): Promise<LabStatus> {
    const state = await readExistingState(config.name);
    const base: LabStatus = {
      lab: config.name,
      runtime: 'existing',
      exists: false,
      kubeconfig: null,
      clusters: [],
      vpcs: [],
      isolation: ISOLATION,
      capabilities: [],
    };
    if (!state) return base;
    const clusters: (ClusterStatus & { nodes: boolean })[] = await Promise.all(
      state.runtimeState.clusters.map(async (spec) => {
        const kubeconfig = clusterKubeconfigFile(config.name, spec.name);
        const resolved = await resolveContext(kubeconfig, spec.name).catch(() => null);
        const ready = resolved ? (await readyz(resolved.endpoint, 5_000).catch(() => ({ ok: false }))).ok : false;
        return {
          name: spec.name,
          vpc: EXISTING_VPC,
          hub: spec.hub,
          apiServer: resolved?.endpoint.server ?? '',
          ready,
          components: [],
          nodes: ready && resolved ? await hasReadyNode(resolved.endpoint) : false,
        };
      }),
    );
    const allReady = clusters.every((c) => c.ready);
    return {
      ...base,
      exists: true,
      kubeconfig: labKubeconfigFile(config.name),
      clusters: clusters.map(({ nodes: _, ...c }) => c),
      // 'pods': pods run on every cluster (here, every cluster has a Ready node).
      capabilities: [...(allReady ? ['control-plane'] : []), ...(allReady && clusters.every((c) => c.nodes) ? ['pods'] : [])],
    };
  }
}

async function hasReadyNode(endpoint: ResolvedContext['endpoint']): Promise<boolean> {
  const client = new KubeClient(endpoint);
  try {
    const nodes = await withTimeout(
      client.get<{ items: { status?: { conditions?: { type: string; status: string }[] } }[] }>('/api/v1/nodes'),
      5_000,
      endpoint.server,
    );
    return nodes.items.some((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
  } catch {
    return false;
  } finally {
    client.close();
  }
}
