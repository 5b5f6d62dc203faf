import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { hubCluster } from '../../config/defaults.js';
import { loadLabConfig } from '../../config/load.js';
import { withVersionFlags } from '../../config/version-flags.js';
import { withFeatureGates } from '../../config/feature-gate-flags.js';
import { PROXY_ENTRYPOINTS, type LabConfig, type ProxyEntrypoint } from '../../config/types.js';
import { InvalidInputError, NotFoundError } from '../../errors.js';
import { downLab, labStatus, upLab, type LifecycleOptions } from '../../lab/lifecycle.js';
import { optionsFromFlags } from '../../runtime/flags.js';
import { resolveRuntime, RUNTIME_CHOICES, RUNTIME_UP_FLAGS, type RuntimeChoice } from '../../runtime/registry.js';
import type { LabStatus, UpOptions } from '../../runtime/types.js';
import { emit, renderTable, type GlobalOptions } from '../output.js';
import { artifactOptions, chosenArtifactsMode, decideArtifactsFor, type ArtifactFlags } from './artifacts-options.js';

// The config barrel, --dry-run's planner and the kubeconfig writers are imported where used:
// `status` and `down` start without their module graphs (zod, yaml, every runtime).

type Args<T> = GlobalOptions & T;

type UpFlags = ArtifactFlags & {
  runtime: RuntimeChoice;
  'bin-dir'?: string;
  retain: boolean;
  'proxy-entrypoint'?: ProxyEntrypoint;
  'dry-run': boolean;
  'kubernetes-version'?: string;
  'ocm-version'?: string;
  'hub-feature-gates'?: string[];
  'klusterlet-feature-gates'?: string[];
  install: boolean;
};

/** Declares each runtime's `up` flags (RUNTIME_UP_FLAGS: the runtime's own data), described with the runtime they are for. */
function runtimeFlagOptions<T>(y: Argv<T>): Argv<T> {
  let out = y;
  for (const [runtime, flags] of Object.entries(RUNTIME_UP_FLAGS)) {
    for (const f of flags) out = out.option(f.flag, { type: 'string', ...(f.array ? { array: true } : {}), describe: `--runtime ${runtime}: ${f.describe}` });
  }
  return out;
}

/** `--proxy-entrypoint` over the lab file's clusterProxy.entrypoint; only for a lab that runs ocm-lab's cluster-proxy. */
function withProxyEntrypoint(config: LabConfig, entrypoint: ProxyEntrypoint | undefined): LabConfig {
  if (!entrypoint) return config;
  if (!config.addons.includes('cluster-proxy') || config.addonImplementations['cluster-proxy'] === 'upstream')
    throw new InvalidInputError(`--proxy-entrypoint ${entrypoint}: the lab does not run ocm-lab's cluster-proxy`, {
      hint: "add cluster-proxy to the lab file's addons (upstream's build keeps its own entrypoint), or leave the flag out",
    });
  return { ...config, clusterProxy: { entrypoint } };
}

export const upCommand: CommandModule<GlobalOptions, Args<UpFlags>> = {
  command: 'up',
  describe: 'bring the lab up, or repair it (idempotent)',
  builder: (y) =>
    runtimeFlagOptions(
      artifactOptions(y)
        .option('runtime', { choices: RUNTIME_CHOICES, default: 'auto' as RuntimeChoice, describe: 'how clusters run' })
        .option('bin-dir', { type: 'string', describe: 'directory with kube-apiserver, kube-controller-manager, kubectl, etcd to use' })
        .option('kubernetes-version', {
          type: 'string',
          describe: "the Kubernetes version of every cluster (default: the lab file's, else the newest supported; `ocm-lab versions` lists them)",
        })
        .option('ocm-version', {
          type: 'string',
          describe: "the OCM release of the lab, or a minor (v1.3) for its newest patch (default: the lab file's ocmVersion; `ocm-lab versions` lists them)",
        })
        .option('hub-feature-gates', {
          type: 'string',
          array: true,
          describe:
            "OCM feature gates of the hub's ClusterManager, Name=true|false comma-separated (e.g. ManifestWorkReplicaSet=true), " +
            "over the lab file's featureGates.hub; " +
            'each must be one of the OCM line (docs/lab-file.md)',
        })
        .option('klusterlet-feature-gates', {
          type: 'string',
          array: true,
          describe: 'OCM feature gates of every Klusterlet, Name=true|false comma-separated (e.g. RawFeedbackJsonString=true), over featureGates.klusterlet',
        })
        .option('retain', { type: 'boolean', default: false, describe: 'keep a half-created lab when up fails' })
        .option('proxy-entrypoint', {
          choices: PROXY_ENTRYPOINTS,
          describe:
            "how cluster-proxy's agents reach the proxy-server: hostname (the hub's address), port-forward (through the hub's API server), " +
            "load-balancer (a LoadBalancer Service); default: the lab file's clusterProxy.entrypoint, else hostname",
        })
        .option('dry-run', {
          type: 'boolean',
          default: false,
          describe: 'print the plan (clusters, networks, processes or containers, images, OCM and addons) and create nothing; -o json for JSON',
        })
        .option('install', { type: 'boolean', default: true, hidden: true, describe: '--no-install: only the clusters, without OCM and the addons' }),
    ),
  handler: async (argv) => {
    const fileConfig = withFeatureGates(withVersionFlags(await loadLabConfig(argv.config), argv), argv);
    const config = withProxyEntrypoint(fileConfig, argv['proxy-entrypoint']);
    // --runtime wins; else the lab file's runtime.name; else auto.
    const choice: RuntimeChoice = argv.runtime !== 'auto' ? argv.runtime : (config.runtime?.name ?? 'auto');
    // Each runtime's flags (its definition's data) as its options; one for another runtime than the choice is exit 2.
    const flagOptions = optionsFromFlags(argv as Record<string, unknown>, choice, RUNTIME_UP_FLAGS);
    if (argv['dry-run']) {
      const { planLab } = await import('../dry-run/lab-plan.js');
      const { dryRun, text } = await planLab(
        choice,
        config,
        { action: 'up', artifacts: chosenArtifactsMode(argv, config) },
        { flagOptions, ...(config.runtime ? { fileOptions: config.runtime.options } : {}) },
        { artifacts: argv.artifacts, download: argv.download },
      );
      if (argv.output !== 'json') process.stderr.write(`runtime: ${dryRun.runtime.name} (${dryRun.runtime.reason})\n`);
      emit(argv, dryRun, () => text);
      return;
    }
    const resolved = await resolveRuntime(choice, config.name);
    if (argv.runtime === 'auto' && argv.output !== 'json') {
      const reason = choice === 'auto' ? resolved.reason : 'runtime.name of the lab file';
      process.stderr.write(`runtime: ${resolved.name} (${reason})\n`);
    }
    const plan = await decideArtifactsFor(argv, config, resolved.name);
    const runtimeOptions = flagOptions[resolved.name];
    const options: UpOptions & LifecycleOptions = {
      runtime: resolved.name,
      ...(runtimeOptions ? { runtimeOptions } : {}),
      binDir: argv['bin-dir'],
      retain: argv.retain,
      artifacts: plan.artifacts,
      mirrors: plan.mirrors,
      renderer: argv.output === 'json' ? 'silent' : argv.verbose ? 'verbose' : undefined,
      ...(argv.install ? {} : { install: false }),
    };
    const result = { ...(await upLab(config, options)), artifacts: plan.decision };
    emit(
      argv,
      result,
      (r) =>
        `\nlab '${r.lab}' is up (${(r.durationMs / 1000).toFixed(1)} s)\n\n${renderStatus(r.status)}\n\n` +
        `kubeconfig: ${r.status.kubeconfig ?? ''}\n  export KUBECONFIG=${r.status.kubeconfig ?? ''}\n` +
        // The hub's context is named after it (existing clusters: after the hub's context, e.g. kind-hub).
        `  kubectl --context ${r.status.clusters.find((c) => c.hub)?.name ?? 'hub'} get ns`,
    );
  },
};

export const downCommand: CommandModule<GlobalOptions, Args<{ 'keep-data': boolean; 'dry-run': boolean; force: boolean; runtime: RuntimeChoice }>> = {
  command: 'down',
  describe: 'stop the lab and remove everything it created (idempotent)',
  builder: (y) =>
    y
      .option('keep-data', { type: 'boolean', default: false, describe: 'keep the lab directory (PKI, etcd data, logs)' })
      .option('dry-run', { type: 'boolean', default: false, describe: 'print what down would stop and remove, and remove nothing; -o json for JSON' })
      .option('force', {
        type: 'boolean',
        default: false,
        describe: 'existing clusters: remove the lab even when a cluster cannot be reached; lists what stays on it',
      })
      .option('runtime', {
        choices: RUNTIME_CHOICES,
        default: 'auto' as RuntimeChoice,
        hidden: true,
        describe: 'the runtime of the lab (auto: the one it was brought up with)',
      }),
  handler: async (argv) => {
    const config = await loadLabConfig(argv.config);
    if (argv['dry-run']) {
      const { planLab } = await import('../dry-run/lab-plan.js');
      const { dryRun, text } = await planLab(argv.runtime, config, { action: 'down', keepData: argv['keep-data'] });
      if (argv.output !== 'json') process.stderr.write(`runtime: ${dryRun.runtime.name} (${dryRun.runtime.reason})\n`);
      emit(argv, dryRun, () => text);
      return;
    }
    const started = Date.now();
    const onProgress = argv.verbose ? (line: string) => process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(1)} s] ${line}\n`) : undefined;
    const result = await downLab(config, { keepData: argv['keep-data'], force: argv.force, onProgress });
    emit(argv, result, (r) =>
      r.existed || r.removed.length
        ? `lab '${r.lab}' is down: removed ${r.removed.length ? r.removed.join(', ') : 'nothing left running'}${r.keptData ? '; data kept' : ''}` +
          (r.notRemoved?.length ? `\nnot removed (could not reach or clean):\n${r.notRemoved.map((n) => `  ${n}`).join('\n')}` : '')
        : `lab '${r.lab}' was not up; nothing to do`,
    );
  },
};

export function renderStatus(status: LabStatus): string {
  if (!status.exists) return `lab '${status.lab}' is not up`;
  const componentNames = [...new Set(status.clusters.flatMap((c) => c.components.map((x) => x.name)))];
  const table = renderTable(
    ['CLUSTER', 'VPC', 'HUB', 'API SERVER', 'READY', ...componentNames.map((n) => n.toUpperCase())],
    status.clusters.map((c) => [
      c.name,
      c.vpc,
      c.hub ? 'yes' : '',
      c.apiServer,
      c.ready ? 'True' : 'False',
      ...componentNames.map((n) => {
        const comp = c.components.find((x) => x.name === n);
        if (!comp) return '-';
        const restarts = comp.restarts?.count
          ? ` (${comp.restarts.count} restart${comp.restarts.count === 1 ? '' : 's'}, last ${comp.restarts.last ?? '?'})`
          : '';
        return `${comp.running ? 'up' : 'DOWN'}${restarts}`;
      }),
    ]),
  );
  const isolation = status.isolation.enforced
    ? `isolation: enforced (${status.vpcs.map((v) => `${v.name}=${v.carrier ?? '-'} ${v.subnet ?? ''}`.trim()).join(', ')})`
    : `isolation: NOT enforced — ${status.isolation.reason ?? 'unknown'}`;
  const supervisor = !status.supervisor
    ? ''
    : status.supervisor.running
      ? `\nsupervisor: running (pid ${status.supervisor.pid}); restarts dead control planes and nodelets`
      : "\nsupervisor: NOT running — dead components stay dead until 'ocm-lab up' (which starts it again)";
  return `${table}\n\n${isolation}${supervisor}`;
}

export const statusCommand: CommandModule<GlobalOptions, Args<{ svg?: string }>> = {
  command: 'status',
  describe: 'show clusters, components and whether VPC isolation is enforced',
  builder: (y) =>
    y.option('svg', {
      type: 'string',
      describe:
        "draw the lab to this SVG file: VPCs, clusters and their API addresses, the hub's endpoint, addons' availability, " +
        'cluster-proxy tunnels probed (health, latency), the kind registry; -o json adds the drawn model as picture',
    }),
  handler: async (argv) => {
    const config = await loadLabConfig(argv.config);
    const status = await labStatus(config);
    if (!argv.svg) return emit(argv, status, renderStatus);
    const [{ gatherLabPicture }, { labPictureSvg }] = await Promise.all([import('../../lab/picture-model.js'), import('../../lab/picture.js')]);
    const picture = await gatherLabPicture(config, status);
    await fs.mkdir(path.dirname(path.resolve(argv.svg)), { recursive: true });
    await fs.writeFile(argv.svg, labPictureSvg(picture));
    if (argv.output !== 'json') process.stderr.write(`picture: ${argv.svg}\n`);
    emit(argv, { ...status, picture }, () => renderStatus(status));
  },
};

export const kubeconfigCommand: CommandModule<GlobalOptions, Args<{ cluster?: string; merge: boolean; via: 'direct' | 'gateway' }>> = {
  command: 'kubeconfig [cluster]',
  describe: "print a cluster's kubeconfig (or the whole lab's), or --merge the lab's contexts into your kubeconfig",
  builder: (y) =>
    y
      .positional('cluster', { type: 'string', describe: 'cluster name (context), e.g. hub or cluster1' })
      .option('merge', { type: 'boolean', default: false, describe: 'add the contexts to $KUBECONFIG (first file) or ~/.kube/config' })
      .option('via', {
        choices: ['direct', 'gateway'] as const,
        default: 'direct' as const,
        describe: "gateway: the hub admin's kubeconfig with the server ending in …/clustergateways/CLUSTER/proxy (seed 001)",
      }),
  handler: async (argv) => {
    const config = await loadLabConfig(argv.config);
    const [{ readLabKubeconfigEntries }, { mergeKubeconfigText, renderKubeconfig, writeCredentialFile }] = await Promise.all([
      import('../../lab/kubeconfig-access.js'),
      import('../../kube/kubeconfig.js'),
    ]);
    let entries;
    if (argv.via === 'gateway') {
      const hubName = hubCluster(config).name;
      if (!argv.cluster || argv.cluster === hubName)
        throw new InvalidInputError('--via gateway needs a managed cluster: ocm-lab kubeconfig --via gateway CLUSTER', {
          hint: `managed clusters: ${config.clusters
            .filter((c) => !c.hub)
            .map((c) => c.name)
            .join(', ')}`,
        });
      if (!config.addons.includes('cluster-gateway'))
        throw new InvalidInputError(`--via gateway: lab '${config.name}' has no cluster-gateway addon`, {
          hint: 'add cluster-gateway to addons: in the lab file',
        });
      if (!config.clusters.some((c) => c.name === argv.cluster)) throw new NotFoundError(`lab '${config.name}' has no cluster '${argv.cluster}'`);
      const [hub] = await readLabKubeconfigEntries(config, hubName);
      const { gatewayKubeconfigEntry } = await import('../../addons/cluster-gateway/kubeconfig.js');
      entries = [gatewayKubeconfigEntry(hub!, argv.cluster)];
    } else {
      entries = await readLabKubeconfigEntries(config, argv.cluster);
    }
    if (argv.merge) {
      const target = (process.env.KUBECONFIG ?? '').split(path.delimiter).find(Boolean) ?? path.join(os.homedir(), '.kube', 'config');
      const existing = await fs.readFile(target, 'utf8').catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return null;
        throw err;
      });
      const { text, replaced } = mergeKubeconfigText(existing, entries);
      await writeCredentialFile(target, text);
      emit(
        argv,
        { file: target, contexts: entries.map((e) => e.name), replaced },
        (r) => `merged contexts ${r.contexts.join(', ')} into ${r.file}${r.replaced.length ? ` (replaced existing ${r.replaced.join(', ')})` : ''}`,
      );
      return;
    }
    process.stdout.write(renderKubeconfig(entries));
  },
};
