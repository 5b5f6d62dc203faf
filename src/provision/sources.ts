import { platformName, type HostPlatform } from './platform.js';
import { kindRelease, kubernetesReleaseFile, OCM_UPSTREAM_IMAGES, ocmImage, recipeOf, recipesFor, type BinaryName } from './recipes.js';

/**
 * Where one artifact of a lab comes from on the path decided, as `up --dry-run` lists it: a download (its URL,
 * the checksum file beside it and our pin), an image (its reference and the digest it must have), or a build here.
 */
export interface ArtifactSource {
  artifact: string;
  version: string;
  from: 'download' | 'image' | 'built here';
  /** download: the URL fetched (before mirrors). */
  url?: string;
  /** download: the checksum file the bytes must match. */
  checksumFile?: string;
  /** download: our own pin, which the published checksum must equal too; absent where none is pinned. */
  sha256?: string;
  /** image: the reference pulled. */
  image?: string;
  /** image: the digest it must have (`sha256:…`), where one is pinned. */
  digest?: string;
  /** built here: what it is built from (`k8s.io/kubernetes@v1.37.2` through the Go module proxy). */
  builtFrom?: string;
}

/**
 * The sources of `names` for a lab of these versions on `platform`: under `official` each binary's release
 * download or image (what publishes none is built here), under `build` the Go build of each.
 */
export function binarySources(
  names: readonly BinaryName[],
  source: 'official' | 'build',
  versions: { kubernetes: string; ocm: string },
  platform: HostPlatform,
): ArtifactSource[] {
  const recipes = recipesFor(versions);
  return names.map((name): ArtifactSource => {
    const recipe = recipeOf(name, recipes);
    const built: ArtifactSource = { artifact: name, version: recipe.version, from: 'built here', builtFrom: `${recipe.module}@${recipe.version}` };
    const release = recipe.family === 'kind' ? kindRelease(recipe.version, platformName(platform)) : recipe.release;
    if (source === 'build' || !release) return built;
    if (release.kind === 'image') return { artifact: name, version: recipe.version, from: 'image', image: release.image(name) };
    const file =
      release.kind === 'tarball' ? release.file : recipe.family === 'kubernetes' ? kubernetesReleaseFile(recipe.version, name, platform) : release.file(name);
    return {
      artifact: name,
      version: recipe.version,
      from: 'download',
      url: file.url,
      checksumFile: file.sumsUrl,
      ...(file.sha256 ? { sha256: file.sha256 } : {}),
    };
  });
}

/** OCM's images at `ocm`: pulled from quay.io under `official` (by tag: OCM pins no digest), built here from OCM's binaries under `build`. */
export function ocmImageSources(ocm: string, source: 'official' | 'build'): ArtifactSource[] {
  return OCM_UPSTREAM_IMAGES.map((i): ArtifactSource =>
    source === 'official'
      ? { artifact: `${i.image} image`, version: ocm, from: 'image', image: ocmImage(i.image, ocm) }
      : { artifact: `${i.image} image`, version: ocm, from: 'built here', builtFrom: `open-cluster-management.io/ocm@${ocm} (${i.binary})` },
  );
}
