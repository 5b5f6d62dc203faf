import fs from 'node:fs/promises';
import type { CommandModule } from 'yargs';
import { loadLabConfig } from '../../config/load.js';
import { InvalidInputError } from '../../errors.js';
import { withHubClient } from '../../ocm/status.js';
import { checkWorkName, createWork, parseManifests } from '../../ocm/work.js';
import { emit, type GlobalOptions } from '../output.js';

type WorkArgs = GlobalOptions & { name: string; cluster: string; file: string; overwrite: boolean };

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** The manifest text of `-f`: a file, or standard input for `-`. */
async function readManifestSource(file: string): Promise<{ text: string; source: string }> {
  if (file === '-') return { text: await readStdin(), source: 'stdin' };
  try {
    return { text: await fs.readFile(file, 'utf8'), source: file };
  } catch (err) {
    throw new InvalidInputError(`cannot read -f ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`, {
      hint: 'give a YAML/JSON file of Kubernetes objects, or - to read them from standard input',
    });
  }
}

const workCommand: CommandModule<GlobalOptions, WorkArgs> = {
  command: 'work <name>',
  describe: 'deliver Kubernetes objects to a managed cluster as a ManifestWork (like clusteradm create work)',
  builder: (y) =>
    y
      .positional('name', { type: 'string', demandOption: true, describe: 'ManifestWork name' })
      .option('cluster', { type: 'string', demandOption: true, describe: 'managed cluster to deliver to (its namespace on the hub)' })
      .option('file', { alias: 'f', type: 'string', demandOption: true, describe: 'YAML/JSON with one or more objects (--- separated); - for stdin' })
      .option('overwrite', { type: 'boolean', default: false, describe: 'replace the manifests of an existing work of that name' }),
  handler: async (argv) => {
    checkWorkName(argv.name);
    const { text, source } = await readManifestSource(argv.file);
    const manifests = parseManifests(text, source);
    const config = await loadLabConfig(argv.config);
    const { work, action } = await withHubClient(config, (hub) =>
      createWork(hub, { name: argv.name, cluster: argv.cluster, manifests, overwrite: argv.overwrite }),
    );
    emit(
      argv,
      { name: work.metadata.name, cluster: work.metadata.namespace, action, manifests: manifests.map((m) => `${m.kind}/${m.metadata.name}`) },
      (r) => `work ${r.cluster}/${r.name} ${r.action} (${r.manifests.join(', ')})`,
    );
  },
};

/** `ocm-lab create …`: today only `create work`. */
export const createCommand: CommandModule<GlobalOptions, GlobalOptions> = {
  command: 'create <kind>',
  describe: 'create OCM objects on the lab hub (work: a ManifestWork)',
  builder: (y) => y.command(workCommand).demandCommand(1, 'name what to create: work'),
  handler: () => undefined,
};
