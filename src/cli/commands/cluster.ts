import type { CommandModule } from 'yargs';
import { loadLabConfig, parseLabConfig, renderLabConfig, type LabConfig } from '../../config/index.js';
import { addonVocabulary } from '../../addons/registry.js';
import { ConflictError, InvalidInputError, NotFoundError } from '../../errors.js';
import { upLab } from '../../lab/lifecycle.js';
import { renderStatus } from './lab-commands.js';
import { emit, type GlobalOptions } from '../output.js';

type AddArgs = GlobalOptions & { name: string; vpc?: string };
type RemoveArgs = GlobalOptions & { name: string };

/** The lab with one more spoke, checked like a lab file (names, VPC, room in its network). */
export function withCluster(config: LabConfig, name: string, vpc?: string): LabConfig {
  if (config.clusters.some((c) => c.name === name))
    throw new InvalidInputError(`lab '${config.name}' already has a cluster '${name}'`, { hint: 'choose another name' });
  const spokeVpc =
    config.clusters.find((c) => !c.hub)?.vpc ?? config.vpcs.find((v) => !config.clusters.some((c) => c.hub && c.vpc === v.name))?.name ?? config.vpcs[0]?.name;
  const target = vpc ?? spokeVpc;
  if (!target || !config.vpcs.some((v) => v.name === target)) {
    throw new InvalidInputError(`--vpc ${target ?? '(none)'} is not a VPC of lab '${config.name}'`, {
      hint: `its VPCs: ${config.vpcs.map((v) => v.name).join(', ')}`,
    });
  }
  const next = { ...config, clusters: [...config.clusters, { name, vpc: target, hub: false }] };
  return { ...parseLabConfig(renderLabConfig(next), `cluster add ${name}`, addonVocabulary()), source: config.source };
}

/** The lab without spoke `name`; the hub cannot go (exit 6). */
export function withoutCluster(config: LabConfig, name: string): LabConfig {
  const cluster = config.clusters.find((c) => c.name === name);
  if (!cluster)
    throw new NotFoundError(`lab '${config.name}' has no cluster '${name}'`, { hint: `its clusters: ${config.clusters.map((c) => c.name).join(', ')}` });
  if (cluster.hub)
    throw new ConflictError(`cluster '${name}' is the hub of lab '${config.name}', and the hub of a lab cannot change`, {
      hint: "run 'ocm-lab down' to remove the whole lab",
    });
  return { ...config, clusters: config.clusters.filter((c) => c.name !== name) };
}

function fileNote(config: LabConfig, name: string, verb: 'lists' | 'does not list'): string {
  return config.source
    ? `\nnote: ${config.source} ${verb === 'lists' ? 'still lists' : 'does not list'} ${name}: ` +
        `the next 'ocm-lab up --config ${config.source}' ${verb === 'lists' ? 'brings it back' : 'removes it again'}; edit the file to keep this change`
    : '';
}

const add: CommandModule<GlobalOptions, AddArgs> = {
  command: 'add <name>',
  describe: 'add a managed cluster to the running lab: created, joined, addons installed',
  builder: (y) =>
    y
      .positional('name', { type: 'string', demandOption: true, describe: 'the new cluster, e.g. cluster3' })
      .option('vpc', { type: 'string', describe: 'its VPC (default: the VPC of the other managed clusters)' }),
  handler: async (argv) => {
    const config = withCluster(await loadLabConfig(argv.config), argv.name, argv.vpc);
    const result = await upLab(config, { renderer: argv.output === 'json' ? 'silent' : argv.verbose ? 'verbose' : undefined });
    emit(
      argv,
      result,
      (r) =>
        `\ncluster ${argv.name} added to lab '${r.lab}' (${(r.durationMs / 1000).toFixed(1)} s)\n\n` +
        `${renderStatus(r.status)}${fileNote(config, argv.name, 'does not list')}`,
    );
  },
};

const remove: CommandModule<GlobalOptions, RemoveArgs> = {
  command: 'remove <name>',
  describe: 'deregister a managed cluster from OCM and delete it, leaving nothing behind',
  builder: (y) => y.positional('name', { type: 'string', demandOption: true, describe: 'the cluster to remove, e.g. cluster3' }),
  handler: async (argv) => {
    const config = withoutCluster(await loadLabConfig(argv.config), argv.name);
    const result = await upLab(config, { renderer: argv.output === 'json' ? 'silent' : argv.verbose ? 'verbose' : undefined });
    emit(
      argv,
      result,
      (r) =>
        `\ncluster ${argv.name} removed from lab '${r.lab}' (${(r.durationMs / 1000).toFixed(1)} s)\n\n` +
        `${renderStatus(r.status)}${fileNote(config, argv.name, 'lists')}`,
    );
  },
};

/** `ocm-lab cluster add|remove`: the lab converges to its clusters plus or minus one, like an edited lab file and `up`. */
export const clusterCommand: CommandModule<GlobalOptions, GlobalOptions> = {
  command: 'cluster <command>',
  describe: 'add or remove a managed cluster of the running lab',
  builder: (y) => y.command(add).command(remove).demandCommand(1, 'name a cluster command: add or remove'),
  handler: () => undefined,
};
