import path from 'node:path';
import { ContainerStartError } from './errors.js';
import { expandVars } from './expansion.js';
import { isOcmLabImage, OCM_LAB_IMAGE } from './image.js';
import type { Container } from './types.js';

/** The image's only entry point: `ocm-lab`, i.e. `node <dist>/cli/main.js`. */
export const ENTRYPOINT = 'ocm-lab';

/**
 * What the container runs, as arguments of the `ocm-lab` CLI. Like a
 * container runtime: no `command` → the image entry point with `args`;
 * `command: ["ocm-lab", …]` → the same entry point with command[1:] + args.
 * Any other command does not exist in our image.
 */
export function cliArgs(container: Container, env: Record<string, string>): string[] {
  if (!isOcmLabImage(container.image)) {
    throw new ContainerStartError(
      'ErrImagePull',
      `image "${container.image ?? ''}" is not available on this node: the ocm-lab nodelet runs only ${OCM_LAB_IMAGE}`,
      false,
    );
  }
  const expand = (s: string) => expandVars(s, (n) => env[n]);
  const command = (container.command ?? []).map(expand);
  const args = (container.args ?? []).map(expand);
  if (command.length === 0) return args;
  const exe = command[0] as string;
  if (exe !== ENTRYPOINT && path.posix.basename(exe) !== ENTRYPOINT) {
    throw new ContainerStartError(
      'CreateContainerError',
      `command ${JSON.stringify(container.command)} cannot run: ${OCM_LAB_IMAGE} has only the '${ENTRYPOINT}' entry point; ` +
        `use args ["internal", "<entry>", …] or command ["${ENTRYPOINT}", …]`,
      false,
    );
  }
  return [...command.slice(1), ...args];
}
