import { dockerEngine } from '../../images/docker.js';
import { kindProvisionable } from './kind-cli.js';

/**
 * Whether the kind runtime can run here: a container engine answers and kind is there or can be provisioned. Apart
 * from KindRuntime so that `auto` can ask without loading the whole runtime. Podman counts as Docker does: a machine
 * where only Podman answers gets kind on Podman (`test/kind/podman-lab.test.ts` runs the default lab so).
 */
export async function kindAvailability(): Promise<{ available: boolean; reason: string | null }> {
  const engine = await dockerEngine();
  if (!engine.available) return { available: false, reason: engine.reason };
  const at =
    engine.name === 'podman'
      ? `Podman answers (podman ${engine.serverVersion})`
      : `a Docker engine answers (server ${engine.serverVersion}${process.env.DOCKER_HOST ? ` at ${process.env.DOCKER_HOST}` : ''})`;
  const kind = await kindProvisionable();
  return kind.ok ? { available: true, reason: `${at}; ${kind.how}` } : { available: false, reason: `${at}, but ${kind.how}` };
}
