import fs from 'node:fs/promises';
import { MissingPrerequisiteError } from '../../errors.js';
import { ensureBaseImage, baseImageKey } from '../base-image.js';
import { buildImage, ensureImage, imageKey, LABEL_IMAGE_KEY, type BuiltImage } from '../docker-build.js';
import { resolveImageOptions, type ImageBuildOptions } from '../options.js';
import { pullPinned, type PinnedImage } from '../pinned-pull.js';
import type { Mirrors } from '../../provision/mirrors.js';
import { onPath } from '../../provision/resolve.js';
import { REGISTRY_INTERNAL_PORT } from './names.js';

/**
 * The registry's image on the built path: Debian's `docker-registry` (the
 * distribution registry, package docker-registry) on the lab's Debian base,
 * built here, never pulled. On the official path: OFFICIAL_REGISTRY_IMAGE.
 */
export const REGISTRY_IMAGE = 'ocm-lab/registry:2';

/** distribution's own image, 2.8.3 (the multi-platform index's digest; docs/notes.md#the-official-paths-docker-hub-pins says where it was read). */
export const OFFICIAL_REGISTRY_IMAGE: PinnedImage = { name: 'registry:2', digest: 'sha256:a3d8aaa63ed8681a604f1dea0aa03f100d5895b6a58ace528858a7b332415373' };

/** `docker pull registry:2@sha256:…` (a mirrors file's `digests:` entry for `registry:2` replaces the pin). */
export async function officialRegistryImage(mirrors: Mirrors, progress: (line: string) => void): Promise<string> {
  return pullPinned(OFFICIAL_REGISTRY_IMAGE, mirrors, progress);
}

export type RegistryImageSource = (options: ImageBuildOptions) => Promise<BuiltImage>;

/** distribution's config: filesystem storage in the volume, plain HTTP on :5000, deletes allowed (so `docker push` can replace a tag's blobs). */
function registryConfig(): string {
  return `version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: /var/lib/registry
  delete:
    enabled: true
http:
  addr: :${REGISTRY_INTERNAL_PORT}
`;
}

async function registryBinary(): Promise<string> {
  const found = await onPath('docker-registry');
  if (!found) {
    throw new MissingPrerequisiteError("the lab's image registry is built from Debian's docker-registry, and no docker-registry is on PATH", {
      hint: 'install it: sudo apt-get install docker-registry (or OCM_LAB_DOCKER=1 scripts/bootstrap.sh)',
    });
  }
  return found;
}

/** The key of the registry image's inputs: the base, Debian's binary (size and mtime) and the config. */
export async function registryImageKey(): Promise<string> {
  const st = await fs.stat(await registryBinary());
  return imageKey({ ref: REGISTRY_IMAGE, base: baseImageKey(), binary: { size: st.size, mtimeMs: Math.trunc(st.mtimeMs) }, config: registryConfig() });
}

export const builtRegistryImage: RegistryImageSource = async (options) => {
  const opts = resolveImageOptions(options);
  const binary = await registryBinary();
  const key = await registryImageKey();
  const base = (await ensureBaseImage(options)).ref;
  return ensureImage(
    REGISTRY_IMAGE,
    key,
    () =>
      buildImage(
        REGISTRY_IMAGE,
        [
          `FROM ${base}`,
          'COPY registry /usr/local/bin/registry',
          'COPY config.yml /etc/docker/registry/config.yml',
          'VOLUME /var/lib/registry',
          `EXPOSE ${REGISTRY_INTERNAL_PORT}`,
          'ENTRYPOINT ["/usr/local/bin/registry", "serve", "/etc/docker/registry/config.yml"]',
          `LABEL ${LABEL_IMAGE_KEY}=${key}`,
          '',
        ].join('\n'),
        { registry: { from: binary, mode: 0o755 }, 'config.yml': { content: registryConfig() } },
        opts,
      ),
    opts,
  );
};
