import { engineChoice } from '../../host/engine.js';
import { dockerEngine } from '../../images/docker.js';
import { kindProvisionable } from './kind-cli.js';

/**
 * Whether the kind runtime can run here: a container engine answers and kind is there or can be provisioned. Apart
 * from KindRuntime so that `auto` can ask without loading the whole runtime. Podman counts only when chosen with
 * OCM_LAB_ENGINE=podman: a lab on Podman has not been run end to end yet (docs/platforms.md), so a machine with only
 * Podman keeps the runtime it had (`up --runtime kind` takes Podman all the same).
 */
export async function kindAvailability(): Promise<{ available: boolean; reason: string | null }> {
  const engine = await dockerEngine();
  if (!engine.available) return { available: false, reason: engine.reason };
  if (engine.name === 'podman' && engineChoice() !== 'podman') {
    return { available: false, reason: `only Podman answers (podman ${engine.serverVersion}); auto takes kind on Podman with OCM_LAB_ENGINE=podman` };
  }
  const at =
    engine.name === 'podman'
      ? `Podman answers (podman ${engine.serverVersion})`
      : `a Docker engine answers (server ${engine.serverVersion}${process.env.DOCKER_HOST ? ` at ${process.env.DOCKER_HOST}` : ''})`;
  const kind = await kindProvisionable();
  return kind.ok ? { available: true, reason: `${at}; ${kind.how}` } : { available: false, reason: `${at}, but ${kind.how}` };
}
