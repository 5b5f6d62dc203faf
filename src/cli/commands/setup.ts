import { Listr, type ListrTask } from 'listr2';
import type { CommandModule } from 'yargs';
import { loadLabConfig, withVersionFlags } from '../../config/index.js';
import { MissingPrerequisiteError } from '../../errors.js';
import { labOperators } from '../../ocm/operators.js';
import {
  binaryStatus,
  ensureBinaries,
  KUBERNETES_BINARIES,
  OCM_BINARIES,
  recipeOf,
  recipesFor,
  type ArtifactsMode,
  type BinaryName,
  type BinaryStatus,
} from '../../provision/index.js';
import { RUNTIME_CHOICES, runtimeDefinition } from '../../runtime/registry.js';
import type { PreparedImage, RuntimePreparation } from '../../runtime/types.js';
import { emit, renderTable, type GlobalOptions } from '../output.js';
import { artifactOptions, decideArtifactsFor, type ArtifactFlags, type ArtifactsPlan } from './artifacts-options.js';

type SetupArgs = GlobalOptions &
  ArtifactFlags & {
    'bin-dir'?: string;
    check: boolean;
    ocm: boolean;
    runtime: string;
    'kubernetes-version'?: string;
    'ocm-version'?: string;
  };

function renderStatus(rows: BinaryStatus[]): string {
  const table = renderTable(
    ['BINARY', 'VERSION', 'SOURCE', 'PATH'],
    rows.map((r) => [r.name, r.version, r.source ?? 'MISSING', r.path ?? '-']),
  );
  const problems = rows.filter((r) => r.problem).map((r) => `${r.name}: ${r.problem}`);
  return problems.length ? `${table}\n\n${problems.join('\n')}` : table;
}

function renderImages(rows: PreparedImage[]): string {
  return renderTable(
    ['IMAGE', 'KEY', 'SOURCE'],
    rows.map((r) => [r.image, r.key, r.source]),
  );
}

/** Kubernetes' and (unless --no-ocm) OCM's binaries, or what the runtime's preparation names for the decided source. */
function binariesToProvision(preparation: RuntimePreparation | undefined, artifacts: ArtifactsMode, withOcm: boolean): BinaryName[] {
  if (preparation) return [...preparation.binaries(artifacts, withOcm)];
  return [...KUBERNETES_BINARIES, ...(withOcm ? OCM_BINARIES : [])];
}

export const setupCommand: CommandModule<GlobalOptions, SetupArgs> = {
  command: 'setup',
  describe: 'provision the binaries a lab needs (Kubernetes, etcd, OCM) without starting anything; --runtime kind also makes the images it needs',
  builder: (y) =>
    artifactOptions(y)
      .option('bin-dir', { type: 'string', describe: 'take binaries from this directory first (else $OCM_LAB_BIN_DIR)' })
      .option('check', {
        type: 'boolean',
        default: false,
        describe: 'only report where each binary comes from, verifying cached ones (exit 3 if any is missing)',
      })
      .option('kubernetes-version', { type: 'string', describe: "the Kubernetes version to provision (default: the lab's; see `ocm-lab versions`)" })
      .option('ocm-version', { type: 'string', describe: "the OCM release to provision, or a minor (v1.3) for its newest patch (default: the lab's)" })
      .option('ocm', { type: 'boolean', default: true, describe: 'also provision the OCM binaries (--no-ocm to skip)' })
      .option('runtime', {
        choices: RUNTIME_CHOICES.filter((c) => c !== 'auto'),
        default: 'local',
        describe: 'kind: also provision kind, and pull (official artifacts) or build here the images the kind runtime needs',
      }),
  handler: async (argv) => {
    const config = withVersionFlags(await loadLabConfig(argv.config), argv);
    const prepare = (await runtimeDefinition(argv.runtime)).prepare;
    const preparation: RuntimePreparation | undefined = prepare ? await prepare() : undefined;
    const base = { kubernetesVersion: config.kubernetesVersion, ocmVersion: config.ocmVersion, binDir: argv['bin-dir'] };
    const renderer = argv.output === 'json' ? 'silent' : argv.verbose || !process.stdout.isTTY || process.env.CI ? 'simple' : 'default';
    const images: PreparedImage[] = [];
    await preparation?.require();
    const plan: ArtifactsPlan | undefined = argv.check ? undefined : await decideArtifactsFor(argv, config, argv.runtime);
    const names = binariesToProvision(preparation, plan?.artifacts ?? 'build', argv.ocm);
    if (plan) {
      const { artifacts, mirrors } = plan;
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
              artifacts,
              mirrors,
              onProgress: (line) => (task.output = line.startsWith(prefix) ? line.slice(prefix.length) : line),
            });
          },
          rendererOptions: { outputBar: 1, persistentOutput: false },
        }));
      // OCM's operators as `up` applies them, rendered into the cache: without them an `up` with nothing answering
      // would still need OCM's module source (the Go module proxy), whatever else setup made.
      if (argv.ocm)
        tasks.push({
          title: `OCM ${config.ocmVersion} operators (cluster-manager, klusterlet)`,
          task: async (_ctx: unknown, task) => {
            await labOperators({ ...base, artifacts, mirrors, onProgress: (line) => (task.output = line) });
          },
          rendererOptions: { outputBar: 1, persistentOutput: false },
        });
      // One task per image: present (one inspect), loaded from the cache, or built.
      for (const job of preparation?.jobs(config, argv['bin-dir'], { artifacts, mirrors }) ?? []) {
        tasks.push({
          title: job.title,
          task: async (_ctx: unknown, task) => {
            const made = await job.run((line) => (task.output = line));
            images.push(...made);
            if (made.length === 1) task.title = `${job.title} (${made[0]!.source})`;
          },
          rendererOptions: { outputBar: 1, persistentOutput: false },
        });
      }
      await new Listr(tasks, { renderer, exitOnError: true }).run();
    } else if (preparation) {
      images.push(...(await preparation.check(config)));
    }
    const status = await binaryStatus({ ...base, names, verification: argv.check ? 'full' : 'quick' });
    // The decision goes into the JSON (the text line went to stderr before the tasks); --check decides nothing.
    const decided = plan ? { artifacts: plan.decision } : {};
    if (preparation) emit(argv, { ...decided, binaries: status, images }, (v) => `${renderStatus(v.binaries)}\n\n${renderImages(v.images)}`);
    else if (plan) emit(argv, { ...decided, binaries: status }, (v) => renderStatus(v.binaries));
    else emit(argv, status, renderStatus);
    const missing = [
      ...status.filter((s) => !s.path).map((m) => `${m.name} ${m.version}`),
      ...images.filter((i) => i.source === 'MISSING').map((i) => i.image),
    ];
    if (missing.length) {
      throw new MissingPrerequisiteError(`missing: ${missing.join(', ')}`, {
        hint: argv.check ? `run 'ocm-lab setup${preparation ? ` --runtime ${argv.runtime}` : ''}' to provision them` : 'see the problems listed above',
      });
    }
  },
};
