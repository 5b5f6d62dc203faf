import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import type { LabConfig } from '../../config/types.js';
import { writeLabState } from '../../config/lab-state.js';
import { NotFoundError, NotReadyError } from '../../errors.js';
import { labDir } from '../../paths.js';
import { clusterPkiPaths, ensureClusterPki, type ClusterPkiPaths } from '../../pki/index.js';
import { ensureBinaries, type BinaryName } from '../../provision/index.js';
import { labBinaryNames } from './lab-binaries.js';
import { planCluster, SERVICE_IP, type ClusterPlan } from './plan.js';
import { emptyLocalState, readLocalState, type LocalLabState, type LocalRuntimeState } from './state.js';
import { reshapeRefusal } from '../reshape.js';
import { runtimeUp } from '../base.js';
import type { DownOptions, DownResult, LabCluster, LabRun, LabStatus, PlanOptions, Provisioning, Runtime, RuntimePlan, Step, UpOptions } from '../types.js';
import { localRuntimePlan } from './dry-run.js';
import { notUpStatus } from '../not-up.js';
import { tcpProbeArgv } from '../tcp-probe.js';
import { CONTROL_PLANE_COMPONENTS, componentFiles, controlPlaneSpecs, type ControlPlaneComponent } from './controlplane.js';
import { adminKubeconfigPath, labKubeconfigPath, writeClusterKubeconfigs, writeLabKubeconfig } from './kubeconfigs.js';
import { networkStatus, planInput, removeNetwork, resolveNetwork, type ResolvedNetwork } from './lab-network.js';
import { reconcilePlanClusters } from './network/index.js';
import { logTail, processState, startProcess, type ProcessSpec } from './process.js';
import { binaryOfPidFile, removeClusterOf, stopClusterProcesses } from './cluster-removal.js';
import { apiServerAnswers, DEFAULT_READY_TIMEOUT_MS, waitForComponent } from './readiness.js';
import { nodeletCapabilities, nodeletSteps } from './nodelets.js';
import { ensureHostFits, localHostFacts, localPlatformCheck, localPreflight } from './host-fit.js';
import { readHostFacts, type InotifyUse } from '../../host/facts.js';
import { requirePreflight, type PreflightCheck } from '../preflight.js';
import { readRestarts, startSupervisor, stopSupervisor, supervisorState } from './supervision.js';

export interface LocalContext {
  run: LabRun<LocalRuntimeState>;
  config: LabConfig;
  dir: string;
  options: UpOptions;
  network?: ResolvedNetwork;
  /** Every binary of the lab: Kubernetes, etcd, OCM and upstream's addons where chosen (the nodelet maps images to them). */
  binaries?: Record<BinaryName, string>;
  clusters: ClusterPlan[];
  pki: Map<string, ClusterPkiPaths>;
  /** Per cluster, the processes `up` made sure of, in start order: the lab's supervisor watches them. */
  supervised: Map<string, ProcessSpec[]>;
}

function clusterSteps(ctx: LocalContext): Step<LocalContext>[] {
  return ctx.clusters.map((cluster) => ({
    title: `${cluster.name}: control plane at ${cluster.apiServerUrl}`,
    run: async (c, progress) => {
      const pki = c.pki.get(cluster.name);
      if (!pki || !c.binaries) throw new Error(`internal: ${cluster.name} has no PKI or binaries yet`);
      const specs = controlPlaneSpecs(cluster, c.binaries, pki);
      c.supervised.set(cluster.name, [...CONTROL_PLANE_COMPONENTS.map((component) => specs[component]), ...(c.supervised.get(cluster.name) ?? [])]);
      const started: string[] = [];
      for (const component of CONTROL_PLANE_COMPONENTS) {
        const spec = specs[component];
        const state = await processState(spec);
        if (state.running) {
          progress(`${component} already running (pid ${state.pid})`);
        } else {
          progress(`starting ${component}`);
          await startAndWait(cluster, component, spec, pki, c.options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS, progress);
          started.push(component);
        }
      }
      // Even a lab that needed no restart must answer: a hung apiserver is not "up".
      await waitForComponent(cluster, 'kube-apiserver', pki, 30_000);
      return started.length ? `started ${started.join(', ')}` : 'already running';
    },
  }));
}

async function startAndWait(
  cluster: ClusterPlan,
  component: ControlPlaneComponent,
  spec: ProcessSpec,
  pki: ClusterPkiPaths,
  timeoutMs: number,
  progress: (line: string) => void,
): Promise<void> {
  const proc = await startProcess(spec);
  try {
    await Promise.race([
      waitForComponent(cluster, component, pki, timeoutMs),
      proc.exited.then(async ({ code, signal }) => {
        throw await componentFailure(cluster, spec, `exited with ${signal ? `signal ${signal}` : `status ${String(code)}`}`);
      }),
    ]);
  } catch (err) {
    if (err instanceof NotReadyError && /did not become ready/.test(err.message)) throw await componentFailure(cluster, spec, err.message);
    throw err;
  } finally {
    proc.release();
  }
  progress(`${component} ready (pid ${proc.pid})`);
}

async function componentFailure(cluster: ClusterPlan, spec: ProcessSpec, why: string): Promise<NotReadyError> {
  return new NotReadyError(`${cluster.name}/${spec.name} ${why}\n--- ${spec.logFile} (last lines) ---\n${await logTail(spec.logFile)}`, {
    hint: `see the whole log in ${spec.logFile}; 'ocm-lab down' removes the lab`,
  });
}

export class LocalRuntime implements Runtime<LocalContext, LocalRuntimeState> {
  readonly name = 'local' as const;
  readonly keepsClusters = false;

  async available(): Promise<{ available: boolean; reason: string | null }> {
    return { available: true, reason: null };
  }

  reshapeRefusal(current: LabConfig, next: LabConfig): string | null {
    return reshapeRefusal(current, next);
  }

  initialState(): LocalRuntimeState {
    return emptyLocalState();
  }

  provisioning(run: LabRun<LocalRuntimeState>): Provisioning<LocalContext> {
    const ctx: LocalContext = { run, config: run.config, dir: run.dir, options: run.options, clusters: [], pki: new Map(), supervised: new Map() };
    const steps: Step<LocalContext>[] = [
      {
        title: 'Binaries',
        run: async (c, progress) => {
          c.binaries = await ensureBinaries(labBinaryNames(c.config, c.options.extraImageBinaries), {
            binDir: c.options.binDir,
            artifacts: c.options.artifacts,
            mirrors: c.options.mirrors,
            kubernetesVersion: c.config.kubernetesVersion,
            ocmVersion: c.config.ocmVersion,
            onProgress: progress,
          });
          return `Kubernetes ${c.config.kubernetesVersion}, OCM ${c.config.ocmVersion}`;
        },
      },
      {
        title: 'VPC networks',
        run: async (c, progress) => {
          c.config = c.run.config;
          c.network = await resolveNetwork(c.config, c.run.state.runtimeState, c.run.save, progress);
          c.clusters = c.config.clusters.map((cl) => planCluster(c.dir, cl, c.network!.addressing(cl.name)));
          return c.network.summary;
        },
      },
      {
        title: 'Certificates',
        run: async (c) => {
          await Promise.all(
            c.clusters.map(async (cluster) => {
              c.pki.set(
                cluster.name,
                await ensureClusterPki(cluster.pkiDir, {
                  clusterName: cluster.name,
                  apiServerIPs: [cluster.address, '127.0.0.1'],
                  serviceIP: SERVICE_IP,
                }),
              );
            }),
          );
          await Promise.all(c.clusters.map((cluster) => writeClusterKubeconfigs(cluster, c.pki.get(cluster.name)!)));
          await writeLabKubeconfig(c.dir, c.clusters, c.pki);
          return `${c.clusters.length} cluster CAs; kubeconfig ${labKubeconfigPath(c.dir)}`;
        },
      },
      {
        title: 'Control planes',
        concurrent: true,
        children: (c) => clusterSteps(c),
      },
      ...nodeletSteps(),
      {
        title: 'Supervisor',
        run: async (c) => {
          const components = c.clusters.flatMap((cluster) => (c.supervised.get(cluster.name) ?? []).map((spec) => ({ cluster: cluster.name, spec })));
          const pid = await startSupervisor(c.dir, components);
          return `pid ${pid}, restarts ${components.length} components when they die`;
        },
      },
    ];
    return {
      context: ctx,
      steps,
      // Before anything is created: a machine that cannot run the lab gets exit 3 and keeps nothing.
      preflight: async (fresh, progress) => {
        const host = await readHostFacts();
        requirePreflight([localPlatformCheck(host)], "the local runtime's clusters");
        await ensureHostFits(run.config.clusters.length, fresh.length, progress, fresh.length ? await localHostFacts(host) : undefined);
      },
      deleteClusters: async (removed) => {
        const previous = run.previous!;
        // It would start the removed clusters' processes again once the lock is released, should this `up` fail.
        await stopSupervisor(run.dir);
        for (const name of removed) await removeClusterOf(run.dir, run.config.name, previous.runtimeState.network, name);
        if (previous.runtimeState.network) previous.runtimeState.network = reconcilePlanClusters(previous.runtimeState.network, planInput(run.config));
      },
    };
  }

  async clusters(config: LabConfig): Promise<LabCluster[]> {
    const dir = labDir(config.name);
    const state = await readLocalState(config.name);
    if (!state) throw new NotFoundError(`lab '${config.name}' is not up (no state in ${dir})`, { hint: "run 'ocm-lab up' first" });
    return clustersOfState(dir, state);
  }

  async plan(config: LabConfig, options: PlanOptions): Promise<RuntimePlan> {
    return localRuntimePlan(
      config,
      options,
      runtimeUp(this, config, {}).steps.map((s) => s.title),
    );
  }

  async preflight(_config: LabConfig, options: PlanOptions & { newClusters: number }): Promise<PreflightCheck[]> {
    const host = options.host ?? (await readHostFacts());
    return localPreflight(host, await localHostFacts(host, options.facts?.inotifyInUse as InotifyUse | undefined), options.newClusters);
  }

  async probe(config: LabConfig, from: string, target: { host: string; port: number }, timeoutMs: number): Promise<boolean> {
    const state = await readLocalState(config.name);
    if (!state) throw new NotFoundError(`lab '${config.name}' is not up`, { hint: 'ocm-lab up' });
    if (!state.config.clusters.some((c) => c.name === from))
      throw new NotFoundError(`lab '${config.name}' has no cluster '${from}'`, { hint: `clusters: ${state.config.clusters.map((c) => c.name).join(', ')}` });
    const net = await networkStatus(state.runtimeState);
    const prefix = net.addressing(from).netnsPrefix;
    const argv = [...prefix, ...tcpProbeArgv(target, timeoutMs)];
    const r = await execa(argv[0] as string, argv.slice(1), { reject: false, timeout: timeoutMs + 5_000 });
    return r.exitCode === 0;
  }

  async down(labName: string, options: DownOptions): Promise<DownResult> {
    const dir = labDir(labName);
    const state = await readLocalState(labName);
    const result: DownResult = { lab: labName, existed: state !== null, removed: [], keptData: !!options.keepData };
    // The supervisor first, so nothing is started again while the lab goes away.
    if (await stopSupervisor(dir)) result.removed.push('supervisor');
    // Stop every component that has a pid file, whatever the state says: the state may be from a crash.
    const clustersDir = path.join(dir, 'clusters');
    const clusterNames = await fs.readdir(clustersDir).catch(() => [] as string[]);
    const stopped = await Promise.all(clusterNames.map((name) => stopClusterProcesses(path.join(clustersDir, name), name)));
    result.removed.push(...stopped.flat());
    const save = async (runtimeState: LocalRuntimeState) => {
      if (state) await writeLabState({ ...state, runtimeState });
    };
    const network = await removeNetwork(labName, state?.runtimeState ?? null, save);
    if (network) result.removed.push(`${network} network resource${network === 1 ? '' : 's'} (namespaces, links, rules)`);
    if (options.keepData) {
      await save(emptyLocalState());
    } else {
      await fs.rm(dir, { recursive: true, force: true });
    }
    return result;
  }

  async status(config: LabConfig): Promise<LabStatus> {
    const dir = labDir(config.name);
    const state = await readLocalState(config.name);
    if (!state) return notUpStatus(config.name, 'local');
    const net = await networkStatus(state.runtimeState);
    const clusters = await Promise.all(
      state.config.clusters.map(async (cl) => {
        const plan = planCluster(dir, cl, net.addressing(cl.name));
        const components = await Promise.all(
          [...CONTROL_PLANE_COMPONENTS, 'nodelet'].map(async (component) => {
            const { pidFile } = componentFiles(plan, component);
            const st = await processState({ pidFile, binary: await binaryOfPidFile(pidFile) });
            const { count, last } = await readRestarts(pidFile);
            return { name: component, running: st.running, detail: st.running ? `pid ${st.pid}` : null, restarts: { count, last } };
          }),
        );
        const ready = components.filter((c) => c.name !== 'nodelet').every((c) => c.running) && (await apiServerAnswers(plan));
        return { name: cl.name, vpc: cl.vpc, hub: cl.hub, apiServer: plan.apiServerUrl, ready, components };
      }),
    );
    const allReady = clusters.every((c) => c.ready);
    return {
      lab: state.lab,
      runtime: 'local',
      exists: true,
      kubeconfig: labKubeconfigPath(dir),
      clusters,
      supervisor: await supervisorState(dir),
      vpcs: net.vpcs,
      isolation: net.isolation,
      capabilities: [
        ...(allReady ? ['control-plane'] : []),
        ...(net.isolation.enforced ? ['vpc-isolation'] : []),
        ...(allReady
          ? await nodeletCapabilities(
              dir,
              state.config.clusters.map((c) => c.name),
            )
          : []),
      ],
    };
  }
}

/** The clusters a lab's state describes, as the install layer needs them. */
async function clustersOfState(dir: string, state: LocalLabState): Promise<LabCluster[]> {
  const net = await networkStatus(state.runtimeState);
  return Promise.all(
    state.config.clusters.map(async (cl) => {
      const plan = planCluster(dir, cl, net.addressing(cl.name));
      return {
        name: cl.name,
        vpc: cl.vpc,
        hub: cl.hub,
        kubeconfig: adminKubeconfigPath(plan),
        internalServer: plan.apiServerUrl,
        internalAddress: plan.address,
        caPem: await fs.readFile(clusterPkiPaths(plan.pkiDir).caCert, 'utf8'),
      };
    }),
  );
}
