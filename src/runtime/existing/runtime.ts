import fs from 'node:fs/promises';
import path from 'node:path';
import type { LabConfig } from '../../config/index.js';
import { ConflictError, InvalidInputError, MissingPrerequisiteError } from '../../errors.js';
import { KubeClient } from '../../kube/client.js';
import { writeKubeconfig } from '../../kube/kubeconfig.js';
import { getOrNull, type KubeObject } from '../../kube/objects.js';
import { clusterKubeconfigFile, labDir, labKubeconfigFile } from '../../paths.js';
import type { ClusterStatus, DownOptions, DownResult, LabCluster, LabStatus, PlanOptions, Runtime, RuntimePlan, Step, UpOptions } from '../types.js';
import { existingRuntimePlan } from './dry-run.js';
import { clusterSpecs, resolveContext, type ExistingClusterSpec, type ExistingClustersInput, type ResolvedContext } from './contexts.js';
import { readExistingState, writeExistingState, type ExistingLabState } from './state.js';

/** All clusters of a lab on existing clusters are in one "VPC": the network between them is the user's. */
export const EXISTING_VPC = 'existing';
const ISOLATION = { enforced: false, reason: 'existing clusters: the network between them is yours' };
const ANSWER_TIMEOUT_MS = 10_000;

/** The lab config of a lab on existing clusters: name, versions and addons from the lab file (or the defaults), clusters from the contexts. */
export function existingLabConfig(base: LabConfig, specs: readonly ExistingClusterSpec[]): LabConfig {
  return { ...base, network: {}, vpcs: [{ name: EXISTING_VPC }], clusters: specs.map((s) => ({ name: s.name, vpc: EXISTING_VPC, hub: s.hub })) };
}

interface ExistingContext {
  config: LabConfig;
  specs: ExistingClusterSpec[];
  kubeconfig: string;
  resolved: Map<string, ResolvedContext>;
  previous: ExistingLabState | null;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from ${what} within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** GET /readyz with the context's credentials: 'ok', or the error text. */
async function readyz(endpoint: ResolvedContext['endpoint'], timeoutMs = ANSWER_TIMEOUT_MS): Promise<{ ok: boolean; said: string }> {
  const client = new KubeClient(endpoint);
  try {
    const body = await withTimeout(client.getText('/readyz'), timeoutMs, endpoint.server);
    return { ok: body.trim() === 'ok', said: body.trim().slice(0, 300) };
  } catch (err) {
    return { ok: false, said: (err as Error).message };
  } finally {
    client.close();
  }
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
    return `CRD clustermanagers.operator.open-cluster-management.io exists (created ${crd.metadata.creationTimestamp ?? '?'})${managers.length ? ` and ClusterManager ${managers.join(', ')}` : ''}`;
  } finally {
    client.close();
  }
}

/**
 * Clusters the user already has (any conformant Kubernetes), reached through
 * contexts of their kubeconfig. `up` checks every context answers and that the
 * hub runs no other OCM hub, then records the contexts and writes the lab's
 * kubeconfig files; it creates and deletes no cluster. `down` removes only the
 * lab directory: the lifecycle takes OCM and the addons off the clusters first.
 */
export class ExistingRuntime implements Runtime<ExistingContext> {
  readonly name = 'existing' as const;
  readonly keepsClusters = true;

  /** `input` comes from `up`'s flags; without it `up` reuses what the lab recorded. */
  constructor(private readonly input?: ExistingClustersInput) {}

  async available(): Promise<{ available: boolean; reason: string | null }> {
    return { available: true, reason: null };
  }

  upSteps(config: LabConfig, options: UpOptions): { context: ExistingContext; steps: Step<ExistingContext>[]; rollback: () => Promise<void> } {
    const ctx: ExistingContext = { config, specs: [], kubeconfig: '', resolved: new Map(), previous: null };
    const steps: Step<ExistingContext>[] = [
      {
        title: 'Existing clusters: contexts answer',
        run: async (c, progress) => {
          c.previous = await readExistingState(config.name);
          const otherRuntime =
            !c.previous &&
            (await fs.access(path.join(labDir(config.name), 'state.json')).then(
              () => true,
              () => false,
            ));
          if (otherRuntime)
            throw new ConflictError(`lab '${config.name}' exists and runs on another runtime`, {
              hint: `take it down first (ocm-lab down), or give the lab on existing clusters another name (name: in a lab file)`,
            });
          if (this.input) {
            c.kubeconfig = path.resolve(this.input.kubeconfig);
            c.specs = clusterSpecs(this.input);
          } else if (c.previous) {
            c.kubeconfig = c.previous.existing.kubeconfig;
            c.specs = c.previous.existing.clusters;
          } else {
            throw new InvalidInputError('--runtime existing needs --kubeconfig FILE, --hub-context CTX and --spoke-context CTX (one per spoke)');
          }
          const [was, now] = [c.previous?.existing.clusters.find((s) => s.hub), c.specs.find((s) => s.hub)];
          if (was && now && (was.name !== now.name || was.context !== now.context)) {
            throw new ConflictError(
              `lab '${config.name}' has the hub ${was.name} (context ${was.context}), and the hub of a lab cannot change (asked: ${now.name}, context ${now.context})`,
              {
                hint: `run 'ocm-lab down' first, or give the new lab another name`,
              },
            );
          }
          for (const spec of c.specs) c.resolved.set(spec.name, await resolveContext(c.kubeconfig, spec.context));
          const answers = await Promise.all(
            c.specs.map(async (spec) => {
              progress(`asking ${spec.context}`);
              return { spec, ...(await readyz(c.resolved.get(spec.name)!.endpoint)) };
            }),
          );
          const silent = answers.filter((a) => !a.ok);
          if (silent.length) {
            throw new InvalidInputError(
              `${silent.map((a) => `context '${a.spec.context}' (${c.resolved.get(a.spec.name)!.endpoint.server}) does not answer GET /readyz with ok: ${a.said}`).join('\n')}`,
              { hint: `check it with: kubectl --kubeconfig ${c.kubeconfig} --context CTX get --raw /readyz` },
            );
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
          const ours = c.previous?.existing.clusters.some((s) => s.hub && s.context === hub.context) && c.previous.existing.kubeconfig === c.kubeconfig;
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
        title: 'Existing clusters: lab state and kubeconfigs',
        run: async (c, progress) => {
          const dir = labDir(config.name);
          // Spokes no longer given leave the lab while the lab still knows them (OCM lets them go through beforeRemove).
          const removed = (c.previous?.existing.clusters ?? []).filter((p) => !c.specs.some((s) => s.name === p.name));
          if (removed.length) {
            const all = await this.clusters(config);
            await options.beforeRemove?.(
              all.filter((x) => removed.some((r) => r.name === x.name)),
              all,
              progress,
            );
          }
          await fs.mkdir(dir, { recursive: true, mode: 0o700 });
          const state: ExistingLabState = {
            version: 1,
            lab: config.name,
            runtime: 'existing',
            createdAt: c.previous?.createdAt ?? new Date().toISOString(),
            config: existingLabConfig(config, c.specs),
            existing: { kubeconfig: c.kubeconfig, clusters: c.specs },
          };
          await writeExistingState(state);
          const entries = c.specs.map((s) => ({ name: s.name, ...c.resolved.get(s.name)!.entry }));
          await writeKubeconfig(labKubeconfigFile(config.name), entries, c.specs.find((s) => s.hub)!.name);
          for (const entry of entries) await writeKubeconfig(clusterKubeconfigFile(config.name, entry.name), [entry]);
          return labKubeconfigFile(config.name);
        },
      },
    ];
    // A failed up keeps what it recorded: OCM may be half-installed on the clusters, and only `down` (which needs the state) takes it off.
    return { context: ctx, steps, rollback: async () => undefined };
  }

  async clusters(config: LabConfig): Promise<LabCluster[]> {
    const state = await readExistingState(config.name);
    if (!state)
      throw new InvalidInputError(
        `lab '${config.name}' is not a lab on existing clusters (no ${path.join(labDir(config.name), 'state.json')} with runtime existing)`,
      );
    return Promise.all(
      state.existing.clusters.map(async (spec) => {
        const kubeconfig = clusterKubeconfigFile(config.name, spec.name);
        const { endpoint } = await resolveContext(kubeconfig, spec.name);
        return {
          name: spec.name,
          vpc: EXISTING_VPC,
          hub: spec.hub,
          kubeconfig,
          internalServer: endpoint.server,
          internalAddress: new URL(endpoint.server).hostname.replace(/^\[|\]$/g, ''),
          caPem: endpoint.caPem,
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
    return { lab: labName, existed, stoppedProcesses: [], removedNetworkResources: 0, keptData: !!options.keepData };
  }

  async plan(config: LabConfig, options: PlanOptions): Promise<RuntimePlan> {
    return existingRuntimePlan(
      config,
      options,
      this.input,
      this.upSteps(config, {}).steps.map((s) => s.title),
    );
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
      state.existing.clusters.map(async (spec) => {
        const kubeconfig = clusterKubeconfigFile(config.name, spec.name);
        const resolved = await resolveContext(kubeconfig, spec.name).catch(() => null);
        const ready = resolved ? (await readyz(resolved.endpoint, 5_000)).ok : false;
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
