import { Listr, type ListrTask } from 'listr2';
import type { CommandModule } from 'yargs';
import { loadLabConfig } from '../../config/index.js';
import { MissingPrerequisiteError } from '../../errors.js';
import { binaryStatus, ensureBinaries, KUBERNETES_BINARIES, OCM_BINARIES, recipeOf, recipesFor, type BinaryName, type BinaryStatus } from '../../provision/index.js';
import { emit, renderTable, type GlobalOptions } from '../output.js';

type SetupArgs = GlobalOptions & { 'bin-dir'?: string; check: boolean; ocm: boolean; download: boolean };

function renderStatus(rows: BinaryStatus[]): string {
  const table = renderTable(
    ['BINARY', 'VERSION', 'SOURCE', 'PATH'],
    rows.map((r) => [r.name, r.version, r.source ?? 'MISSING', r.path ?? '-']),
  );
  const problems = rows.filter((r) => r.problem).map((r) => `${r.name}: ${r.problem}`);
  return problems.length ? `${table}\n\n${problems.join('\n')}` : table;
}

export const setupCommand: CommandModule<GlobalOptions, SetupArgs> = {
  command: 'setup',
  describe: 'provision the binaries a lab needs (Kubernetes, etcd, OCM) without starting anything',
  builder: (y) =>
    y
      .option('bin-dir', { type: 'string', describe: 'take binaries from this directory first (else $OCM_LAB_BIN_DIR)' })
      .option('check', { type: 'boolean', default: false, describe: 'only report where each binary comes from, verifying cached ones (exit 3 if any is missing)' })
      .option('ocm', { type: 'boolean', default: true, describe: 'also provision the OCM binaries (--no-ocm to skip)' })
      .option('download', { type: 'boolean', default: process.env.OCM_LAB_NO_DOWNLOAD !== '1', describe: 'try official release downloads before building (--no-download, or $OCM_LAB_NO_DOWNLOAD=1, to skip)' }),
  handler: async (argv) => {
    const config = await loadLabConfig(argv.config);
    const base = { kubernetesVersion: config.kubernetesVersion, ocmVersion: config.ocmVersion, binDir: argv['bin-dir'] };
    const names: BinaryName[] = [...KUBERNETES_BINARIES, ...(argv.ocm ? OCM_BINARIES : [])];
    if (!argv.check) {
      // One task per recipe: each is one download or one `go build`.
      const recipes = recipesFor({ kubernetes: config.kubernetesVersion, ocm: config.ocmVersion });
      const tasks: ListrTask[] = recipes
        .map((recipe) => ({ recipe, group: names.filter((n) => recipeOf(n, recipes) === recipe) }))
        .filter(({ group }) => group.length)
        .map(({ recipe, group }) => ({
          title: `${recipe.title} (${group.join(', ')})`,
          task: async (_ctx: unknown, task) => {
            const prefix = `${recipe.title}: `;
            await ensureBinaries(group, {
              ...base,
              allowDownload: argv.download,
              onProgress: (line) => (task.output = line.startsWith(prefix) ? line.slice(prefix.length) : line),
            });
          },
          rendererOptions: { outputBar: 1, persistentOutput: false },
        }));
      const renderer = argv.output === 'json' ? 'silent' : argv.verbose || !process.stdout.isTTY || process.env.CI ? 'simple' : 'default';
      await new Listr(tasks, { renderer, exitOnError: true }).run();
    }
    const status = await binaryStatus({ ...base, names, verification: argv.check ? 'full' : 'quick' });
    emit(argv, status, renderStatus);
    const missing = status.filter((s) => !s.path);
    if (missing.length) {
      throw new MissingPrerequisiteError(`missing: ${missing.map((m) => `${m.name} ${m.version}`).join(', ')}`, {
        hint: argv.check ? "run 'ocm-lab setup' to provision them" : 'see the problems listed above',
      });
    }
  },
};
