import { InvalidInputError, MissingPrerequisiteError } from '../errors.js';
import { OCM_LAB_IMAGE, ocmLabImageAt } from './catalogue.js';
import { docker, dockerEngine, engineCli } from './docker.js';
import { ensureOwnImage } from './lab-images.js';
import { parseReference, registryPrefix } from '../provision/oci/reference.js';

/**
 * `--image-registry REG` (the lab file's `runtime.existing.imageRegistry`): a registry the user's clusters pull from.
 * `up` builds our image here as `setup --runtime kind` does (the Dockerfile, FROM the lab's node base), pushes it there
 * as `REG/ocm-lab:<version>` with the user's own `docker login`, and the lab's pods run it from there.
 */

/** The registry as given (`host[:port][/path]`, no scheme, tag or digest), checked: a clear refusal naming the value and its form otherwise. */
export function parseImageRegistry(value: string): string {
  const registry = registryPrefix(value);
  if (registry === null) {
    throw new InvalidInputError(
      `--image-registry ${JSON.stringify(value)} is not a registry: it takes HOST[:PORT][/PATH] in lower case, without a scheme, tag or digest`,
      { hint: 'e.g. --image-registry ghcr.io/my-org, or --image-registry registry.internal:5000' },
    );
  }
  return registry;
}

/** Builds our image (or finds it built) and pushes it to `registry`; returns the reference the lab's pods name. */
export async function pushOurImage(registry: string, progress: (line: string) => void): Promise<string> {
  const engine = await dockerEngine();
  if (!engine.available) {
    throw new MissingPrerequisiteError(
      `--image-registry ${registry}: building and pushing our image needs a container engine (Docker or Podman): ${engine.reason ?? ''}`,
      {
        hint: 'start Docker or install Podman (`docker version` or `podman version` must answer), or push the image yourself and leave --image-registry out',
      },
    );
  }
  await ensureOwnImage({ onProgress: progress });
  const target = ocmLabImageAt(registry);
  const cli = await engineCli();
  progress(`${cli} push ${target}`);
  await docker(['tag', OCM_LAB_IMAGE, target]);
  const pushed = await docker(['push', '--quiet', target], { allowFailure: true });
  if (pushed.exitCode !== 0) {
    throw new MissingPrerequisiteError(`${cli} push ${target} failed (exit ${pushed.exitCode}): ${(pushed.stderr || pushed.stdout).trim()}`, {
      hint:
        `check that this machine may push to ${registry} (${cli} login ${parseReference(target).host})` +
        (cli === 'podman' ? '; a registry without TLS must be marked insecure in registries.conf for Podman' : ''),
    });
  }
  return target;
}
