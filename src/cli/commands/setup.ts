import { Listr, type ListrTask } from 'listr2';
import type { CommandModule } from 'yargs';
import { loadLabConfig, withKubernetesVersion } from '../../config/index.js';
import { requireKubernetesRelease } from '../../provision/index.js';
import { MissingPrerequisiteError } from '../../errors.js';
import {
  binaryStatus,
  ensureBinaries,
  KIND_NODE_BINARIES,
  KUBERNETES_BINARIES,
  OCM_BINARIES,
  recipeOf,
  recipesFor,
  type BinaryName,
  type BinaryStatus,
} from '../../provision/index.js';
import { requireDockerEngine } from '../../runtime/kind/docker.js';
import {
  BASE_IMAGE,
  baseImageKey,
  componentImageKey,
  componentImageSpecs,
  ensureBaseImage,
  ensureComponentImage,
  ensureKindNodeImageDetail,
  localImageKey,
  nodeImageKey,
  nodeImageRef,
  type BuiltImage,
  type ImageBuildOptions,
} from '../../runtime/kind/images/index.js';
import { ensureLabImagesDetail, labImages } from '../../runtime/kind/lab-images.js';
import { emit, renderTable, type GlobalOptions } from '../output.js';

type SetupArgs = GlobalOptions & {
  'bin-dir'?: string;
  check: boolean;
  ocm: boolean;
  download: boolean;
  runtime: 'local' | 'kind';
  'kubernetes-version'?: string;
};

function renderStatus(rows: BinaryStatus[]): string {
  const table = renderTable(
    ['BINARY', 'VERSION', 'SOURCE', 'PATH'],
    rows.map((r) => [r.name, r.version, r.source ?? 'MISSING', r.path ?? '-']),
  );
  const problems = rows.filter((r) => r.problem).map((r) => `${r.name}: ${r.problem}`);
  return problems.length ? `${table}\n\n${problems.join('\n')}` : table;
}

/** One offline image `setup --runtime kind` makes: its name, the key its inputs give, and how to make it. */
interface KindImageJob {
  ref: string;
  key: () => string;
  ensure: (opts: ImageBuildOptions) => Promise<BuiltImage>;
}

/**
 * Every image the kind runtime needs offline, in build order (the base first:
 * others are built FROM it; the node image last: it preloads the components).
 * The lab's own images (ocm-lab:dev, OCM's) join this list here.
 */
function kindImageJobs(kubernetesVersion: string): KindImageJob[] {
  const release = requireKubernetesRelease(kubernetesVersion);
  const withVersion = (o: ImageBuildOptions): ImageBuildOptions => ({ ...o, kubernetesVersion });
  return [
    { ref: BASE_IMAGE, key: baseImageKey, ensure: ensureBaseImage },
    ...componentImageSpecs(release).map((spec) => ({
      ref: spec.ref,
      key: () => componentImageKey(spec, release),
      ensure: (o: ImageBuildOptions) => ensureComponentImage(spec, withVersion(o)),
    })),
    { ref: nodeImageRef(kubernetesVersion), key: () => nodeImageKey(release), ensure: (o: ImageBuildOptions) => ensureKindNodeImageDetail(withVersion(o)) },
  ];
}

interface ImageStatus {
  image: string;
  key: string;
  /** present | loaded | built, or MISSING (only with --check). */
  source: string;
}

function renderImages(rows: ImageStatus[]): string {
  return renderTable(
    ['IMAGE', 'KEY', 'SOURCE'],
    rows.map((r) => [r.image, r.key, r.source]),
  );
}

export const setupCommand: CommandModule<GlobalOptions, SetupArgs> = {
  command: 'setup',
  describe: 'provision the binaries a lab needs (Kubernetes, etcd, OCM) without starting anything; --runtime kind also builds the offline images',
  builder: (y) =>
    y
      .option('bin-dir', { type: 'string', describe: 'take binaries from this directory first (else $OCM_LAB_BIN_DIR)' })
      .option('check', {
        type: 'boolean',
        default: false,
        describe: 'only report where each binary comes from, verifying cached ones (exit 3 if any is missing)',
      })
      .option('kubernetes-version', { type: 'string', describe: "the Kubernetes version to provision (default: the lab's; see `ocm-lab versions`)" })
      .option('ocm', { type: 'boolean', default: true, describe: 'also provision the OCM binaries (--no-ocm to skip)' })
      .option('download', {
        type: 'boolean',
        default: process.env.OCM_LAB_NO_DOWNLOAD !== '1',
        describe: 'try official release downloads before building (--no-download, or $OCM_LAB_NO_DOWNLOAD=1, to skip)',
      })
      .option('runtime', {
        choices: ['local', 'kind'] as const,
        default: 'local' as const,
        describe: 'kind: also provision kind and the node image binaries, and build (or load from the cache) every image the kind runtime needs offline',
      }),
  handler: async (argv) => {
    const config = withKubernetesVersion(await loadLabConfig(argv.config), argv['kubernetes-version']);
    const kind = argv.runtime === 'kind';
    const base = { kubernetesVersion: config.kubernetesVersion, ocmVersion: config.ocmVersion, binDir: argv['bin-dir'] };
    const names: BinaryName[] = [...new Set([...KUBERNETES_BINARIES, ...(argv.ocm ? OCM_BINARIES : []), ...(kind ? KIND_NODE_BINARIES : [])])];
    const renderer = argv.output === 'json' ? 'silent' : argv.verbose || !process.stdout.isTTY || process.env.CI ? 'simple' : 'default';
    const images: ImageStatus[] = [];
    if (kind) await requireDockerEngine();
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
      // One task per image: present (one inspect), loaded from the cache, or built.
      if (kind) {
        for (const job of kindImageJobs(config.kubernetesVersion)) {
          tasks.push({
            title: `image ${job.ref}`,
            task: async (_ctx: unknown, task) => {
              const built = await job.ensure({ binDir: argv['bin-dir'], onProgress: (line) => (task.output = line) });
              images.push({ image: built.ref, key: built.key, source: built.source });
              task.title = `image ${job.ref} (${built.source})`;
            },
            rendererOptions: { outputBar: 1, persistentOutput: false },
          });
        }
        tasks.push({
          title: `images the lab runs (${labImages(config).join(', ')})`,
          task: async (_ctx: unknown, task) => {
            for (const built of await ensureLabImagesDetail(config, { binDir: argv['bin-dir'], onProgress: (line) => (task.output = line) })) {
              images.push({ image: built.ref, key: built.key, source: built.source });
            }
          },
          rendererOptions: { outputBar: 1, persistentOutput: false },
        });
      }
      await new Listr(tasks, { renderer, exitOnError: true }).run();
    } else if (kind) {
      for (const job of kindImageJobs(config.kubernetesVersion)) {
        const key = job.key();
        images.push({ image: job.ref, key, source: (await localImageKey(job.ref)) === key ? 'present' : 'MISSING' });
      }
      for (const ref of labImages(config)) {
        const key = await localImageKey(ref);
        images.push({ image: ref, key: key ?? '-', source: key ? 'present' : 'MISSING' });
      }
    }
    const status = await binaryStatus({ ...base, names, verification: argv.check ? 'full' : 'quick' });
    if (kind) emit(argv, { binaries: status, images }, (v) => `${renderStatus(v.binaries)}\n\n${renderImages(v.images)}`);
    else emit(argv, status, renderStatus);
    const missing = [
      ...status.filter((s) => !s.path).map((m) => `${m.name} ${m.version}`),
      ...images.filter((i) => i.source === 'MISSING').map((i) => i.image),
    ];
    if (missing.length) {
      throw new MissingPrerequisiteError(`missing: ${missing.join(', ')}`, {
        hint: argv.check ? `run 'ocm-lab setup${kind ? ' --runtime kind' : ''}' to provision them` : 'see the problems listed above',
      });
    }
  },
};
