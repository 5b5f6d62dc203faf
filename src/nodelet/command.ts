import { ContainerStartError } from './errors.js';
import { expandVars } from './expansion.js';
import type { RunnableImage } from './images.js';
import type { Container } from './types.js';

/**
 * The argv a container runs, as a container runtime builds it from the image
 * and the spec: `command` replaces the image's entry point and `args` its
 * CMD; `$(VAR)` expands against the container's environment. `command[0]`
 * may be an alias of the image (`ocm-lab` → node + the CLI script); any other
 * program is looked up on PATH inside the container (host /usr is shared).
 */
export function containerArgv(container: Container, image: RunnableImage, env: Record<string, string>): string[] {
  const expand = (s: string) => expandVars(s, (n) => env[n]);
  const command = (container.command ?? []).map(expand);
  const args = container.args !== undefined ? container.args.map(expand) : undefined;
  const argv = command.length ? [...command, ...(args ?? [])] : [...image.entrypoint, ...(args ?? image.cmd)];
  if (argv.length === 0) {
    throw new ContainerStartError('CreateContainerError', `image ${image.ref} has no entry point: the container must set command`, false);
  }
  const exe = argv[0] as string;
  const alias = image.aliases[exe] ?? image.aliases[exe.slice(exe.lastIndexOf('/') + 1)];
  return alias && command.length ? [...alias, ...argv.slice(1)] : argv;
}
