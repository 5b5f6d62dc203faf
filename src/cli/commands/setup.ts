import { Listr, type ListrTask } from 'listr2';
import type { CommandModule } from 'yargs';
import { loadLabConfig } from '../../config/index.js';
import { MissingPrerequisiteError } from '../../errors.js';
import { binaryStatus, ensureBinaries, KUBERNETES_BINARIES, OCM_BINARIES, type BinaryName } from '../../provision/index.js';
import { emit, renderTable, type GlobalOptions } from '../output.js';

type SetupArgs = GlobalOptions & { 'bin-dir'?: string; check: boolean; ocm: boolean; download: boolean };

export const setupCommand: CommandModule<GlobalOptions, SetupArgs> = {
  command: 'setup',
  describe: 'provision the binaries a lab needs (Kubernetes, etcd, OCM) without starting anything',
  builder: (y) =>
    y
      .option('bin-dir', { type: 'string', describe: 'use binaries from this directory instead' })
      .option('check', { type: 'boolean', default: false, describe: 'only report what is there (exit 3 if anything is missing)' })
      .option('ocm', { type: 'boolean', default: true, describe: 'also provision the OCM binaries (--no-ocm to skip)' })
      .option('download', { type: 'boolean', default: process.env.OCM_LAB_NO_DOWNLOAD !== '1', describe: 'try official release downloads before building' }),
  handler: async (argv) => {
    const config = await loadLabConfig(argv.config);
    const versions = { kubernetesVersion: config.kubernetesVersion, ocmVersion: config.ocmVersion, binDir: argv['bin-dir'] };
    const names: BinaryName[] = [...KUBERNETES_BINARIES, ...(argv.ocm ? OCM_BINARIES : [])];
    if (!argv.check) {
      const groups: [string, BinaryName[]][] = [
        [`Kubernetes ${config.kubernetesVersion} and etcd`, KUBERNETES_BINARIES],
        ...(argv.ocm ? ([[`OCM ${config.ocmVersion}`, OCM_BINARIES]] as [string, BinaryName[]][]) : []),
      ];
      const tasks: ListrTask[] = groups.map(([title, group]) => ({
          title,
          task: async (_: unknown, task) => {
            await ensureBinaries(group, { ...versions, allowDownload: argv.download, onProgress: (line) => (task.output = line) });
          },
          rendererOptions: { outputBar: 1 },
        }));
      await new Listr(tasks,
        { renderer: argv.output === 'json' ? 'silent' : process.stdout.isTTY && !process.env.CI ? 'default' : 'simple', exitOnError: true },
      ).run();
    }
    const status = await binaryStatus(names, versions);
    emit(argv, status, (rows) => renderTable(['BINARY', 'VERSION', 'SOURCE', 'PATH'], rows.map((r) => [r.name, r.version, r.source ?? 'MISSING', r.path ?? '-'])));
    const missing = status.filter((s) => !s.path);
    if (missing.length) {
      throw new MissingPrerequisiteError(`missing: ${missing.map((m) => m.name).join(', ')}`, { hint: "run 'ocm-lab setup' to provision them" });
    }
  },
};
