import path from 'node:path';
import {
  OCM_IMAGE_REPOSITORY,
  OCM_IMAGE_USER,
  OCM_LAB_IMAGE,
  OCM_UPSTREAM_IMAGES,
  UPSTREAM_ADDON_IMAGES,
  UPSTREAM_CLUSTER_GATEWAY_IMAGE,
} from '../images/catalogue.js';
import { canonicalReference, repositoryOf } from '../provision/oci/reference.js';
import { UPSTREAM_ADDON_BINARIES, type BinaryName } from '../provision/recipes.js';

/**
 * The images the nodelet runs, and what each one is on this machine: a set of
 * host files bind-mounted into the container, read-only, at the paths the real
 * image has them (where images come from on each runtime: src/images/catalogue.ts). This
 * map is the one place that says which images the nodelet runs; `docs/nodelet.md` lists it.
 */

/** The CLI's name as the image's entry point and as `command[0]`. */
const OCM_LAB_ENTRYPOINT = 'ocm-lab';
/** Where our image has the CLI on PATH, as the Dockerfile links it. */
export const OCM_LAB_ON_PATH = `/usr/local/bin/${OCM_LAB_ENTRYPOINT}`;

export { OCM_UPSTREAM_IMAGES };

/** A host file or directory that appears read-only at `destination` inside the container. */
interface ImageFile {
  source: string;
  destination: string;
}

/** What a container of an image runs and sees, before its pod spec is applied. */
export interface RunnableImage {
  /** The reference as the pod spec spells it. */
  ref: string;
  files: ImageFile[];
  entrypoint: string[];
  /** Default arguments (Docker's CMD). */
  cmd: string[];
  /** `command[0]` values that stand for another argv (`ocm-lab` → node + the CLI script). */
  aliases: Record<string, string[]>;
  user: { uid: number; gid: number };
  workingDir: string;
  /** Reported as the container status' imageID. */
  imageID: string;
}

export interface ImageCatalogOptions {
  /** The lab's OCM version: upstream images run only at this tag. */
  ocmVersion: string;
  /** Provisioned binaries by name (from `ensureBinaries`); an image whose binary is missing is not offered. */
  binaries: Partial<Record<BinaryName, string>>;
  /**
   * How the `ocm-lab` image runs: this node binary with this CLI script, the package root mounted at its own path;
   * `linkedDependencies`, the real folder `<packageRoot>/node_modules` links to when that lies elsewhere, mounted at its own path too;
   * `launcher`, an executable script running the CLI (cliLauncherScript), mounted at OCM_LAB_ON_PATH as the real image has it.
   */
  cli: { nodeBinary: string; cliMain: string; packageRoot: string; linkedDependencies?: string; launcher?: string };
}

/**
 * The image's name in full (`docker.io/library/ocm-lab:0.1.0` for `ocm-lab:0.1.0`): the key every spelling of one
 * image shares, as the kubelet compares them. A pod's image that is no reference is kept as written (it matches nothing).
 */
function imageKey(image: string): string {
  try {
    return canonicalReference(image);
  } catch {
    return image.trim();
  }
}

/** The repository of `image` in full (no tag or digest), or null when it is no reference. */
function repositoryKey(image: string): string | null {
  try {
    return repositoryOf(image);
  } catch {
    return null;
  }
}

const OCM_LAB_KEY = imageKey(OCM_LAB_IMAGE);

/** True for our image (`ocm-lab:<version>`) in any spelling (`library/…`, `docker.io/library/…`). */
export function isOcmLabImage(image: string | undefined): boolean {
  return image !== undefined && imageKey(image) === OCM_LAB_KEY;
}

/** The `ocm-lab` a shell in our image finds on PATH: this node running this CLI script, as the image's entry point does. */
export function cliLauncherScript(nodeBinary: string, cliMain: string): string {
  const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  return `#!/bin/sh\nexec ${quote(nodeBinary)} ${quote(cliMain)} "$@"\n`;
}

/** Host directories the host binaries and libraries live in; every container sees them read-only. */
const SHARED_HOST_DIRS = ['/usr', '/lib', '/lib64', '/bin', '/sbin'];

function isUnder(p: string, dir: string): boolean {
  return p === dir || p.startsWith(`${dir}/`);
}

/**
 * What the `ocm-lab` image mounts so the CLI's imports resolve: the package
 * root in a checkout; the `node_modules` folder holding it when npm installed
 * it, as npm puts its dependencies beside it there, not inside.
 */
function cliFilesRoot(packageRoot: string): string {
  const parent = path.dirname(packageRoot);
  return path.basename(parent) === 'node_modules' ? parent : packageRoot;
}

/** The image map of one nodelet: which references it runs and what they are (by imageKey, so any spelling of one finds it). */
export class ImageCatalog {
  private readonly images = new Map<string, RunnableImage>();

  constructor(private readonly opts: ImageCatalogOptions) {
    const { nodeBinary, cliMain, packageRoot, linkedDependencies, launcher } = opts.cli;
    const node = [nodeBinary, cliMain];
    // The node binary is usually under /usr (shared anyway); otherwise it is mounted at its own path too.
    const nodeFiles = SHARED_HOST_DIRS.some((d) => isUnder(nodeBinary, d)) ? [] : [{ source: nodeBinary, destination: nodeBinary }];
    const mounted = cliFilesRoot(packageRoot);
    this.images.set(OCM_LAB_KEY, {
      ref: OCM_LAB_IMAGE,
      files: [
        { source: mounted, destination: mounted },
        ...(linkedDependencies ? [{ source: linkedDependencies, destination: linkedDependencies }] : []),
        ...nodeFiles,
        ...(launcher ? [{ source: launcher, destination: OCM_LAB_ON_PATH }] : []),
      ],
      entrypoint: node,
      cmd: [],
      aliases: { [OCM_LAB_ENTRYPOINT]: node },
      user: { uid: 0, gid: 0 },
      workingDir: '/',
      imageID: `ocm-lab://${OCM_LAB_IMAGE}`,
    });
    for (const u of OCM_UPSTREAM_IMAGES) {
      const binary = opts.binaries[u.binary];
      if (!binary) continue;
      const ref = `${OCM_IMAGE_REPOSITORY}/${u.image}:${opts.ocmVersion}`;
      this.images.set(imageKey(ref), {
        ref,
        files: [{ source: binary, destination: u.pathInImage }],
        entrypoint: [],
        cmd: [],
        aliases: {},
        user: { ...OCM_IMAGE_USER },
        workingDir: '/',
        imageID: `ocm-lab://${ref}`,
      });
    }
    // Upstream's addon images (and its cluster-gateway, for the gateway bench), offered only when the nodelet was given every binary the image holds.
    for (const u of [...UPSTREAM_ADDON_IMAGES, UPSTREAM_CLUSTER_GATEWAY_IMAGE]) {
      if (!u.files.every((f) => opts.binaries[f.binary])) continue;
      this.images.set(imageKey(u.ref), {
        ref: u.ref,
        files: u.files.map((f) => ({ source: opts.binaries[f.binary] as string, destination: f.pathInImage })),
        entrypoint: 'entrypoint' in u ? [...u.entrypoint] : [],
        cmd: [],
        aliases: {},
        user: { ...u.user },
        workingDir: '/',
        imageID: `ocm-lab://${u.ref}`,
      });
    }
  }

  /** What `image` runs as here, its `ref` spelled as given; undefined when this node does not run it. */
  resolve(image: string | undefined): RunnableImage | undefined {
    if (image === undefined) return undefined;
    const found = this.images.get(imageKey(image));
    return found && { ...found, ref: image.trim() };
  }

  runs(image: string | undefined): boolean {
    return this.resolve(image) !== undefined;
  }

  /** The references this node runs, for messages: `ocm-lab:0.1.0, quay.io/…/work:v1.2.1, …`. */
  describe(): string {
    return [...this.images.values()].map((i) => i.ref).join(', ');
  }

  /** Why `image` cannot run here (an ErrImagePull / FailedScheduling message). */
  whyNot(image: string | undefined): string {
    const ref = (image ?? '').trim();
    const repository = repositoryKey(ref);
    const upstream = OCM_UPSTREAM_IMAGES.find((u) => repository === repositoryOf(`${OCM_IMAGE_REPOSITORY}/${u.image}`));
    if (upstream && !this.opts.binaries[upstream.binary])
      return `image "${ref}" needs the provisioned binary ${upstream.binary}, which this nodelet was not given`;
    if (upstream)
      return (
        `image "${ref}" is not available on this node: ` +
        `it runs ${OCM_IMAGE_REPOSITORY}/${upstream.image} only at the lab's OCM version ${this.opts.ocmVersion}`
      );
    const addonImage = UPSTREAM_ADDON_IMAGES.find((u) => repository === repositoryOf(u.ref));
    if (addonImage) {
      const missing = addonImage.files.filter((f) => !this.opts.binaries[f.binary]).map((f) => f.binary);
      if (missing.length)
        return (
          `image "${ref}" needs the provisioned binaries ${missing.join(', ')}, which this nodelet was not given ` +
          `(the lab runs ${addonImage.addon} with implementation ocm-lab)`
        );
      return `image "${ref}" is not available on this node: it runs ${addonImage.ref} only (the pinned upstream version)`;
    }
    return `image "${ref || '(none)'}" is not available on this node: the ocm-lab nodelet runs only ${this.describe()}`;
  }
}

/**
 * Parses `--image-binary <name>=<path>` values; the names are those of the
 * provisioning recipes: `known` and always the upstream addons' binaries.
 */
export function parseImageBinaries(values: readonly string[], known: readonly BinaryName[]): Partial<Record<BinaryName, string>> {
  const out: Partial<Record<BinaryName, string>> = {};
  const names: readonly BinaryName[] = [
    ...new Set([...known, ...Object.values(UPSTREAM_ADDON_BINARIES).flat(), ...UPSTREAM_CLUSTER_GATEWAY_IMAGE.files.map((f) => f.binary)]),
  ];
  for (const v of values) {
    const eq = v.indexOf('=');
    const name = v.slice(0, eq) as BinaryName;
    const file = v.slice(eq + 1);
    if (eq <= 0 || !names.includes(name) || !path.isAbsolute(file)) {
      throw new Error(`--image-binary ${JSON.stringify(v)}: expected <name>=<absolute path> with name one of ${names.join(', ')}`);
    }
    out[name] = file;
  }
  return out;
}
