import { askedEngine, detectEngine, type EngineName } from '../../host/engine.js';
import { dockerEngineSeam } from './docker.js';
import { podmanEngineSeam } from './podman.js';
import type { Engine } from './types.js';

export type { Engine, NetworkFacts } from './types.js';

/** The seam of the engine named. */
export function engineNamed(name: EngineName): Engine {
  return name === 'podman' ? podmanEngineSeam : dockerEngineSeam;
}

/**
 * The seam of the engine src/host/engine.ts finds. When none answers: the one asked for (a lab's recorded engine, or
 * `$OCM_LAB_ENGINE`'s), Docker's under auto, so that a call made anyway fails as that engine's CLI (preflight has said
 * why by then) and never looks for a Podman lab's objects in Docker.
 */
export async function currentEngine(): Promise<Engine> {
  const detection = await detectEngine();
  const asked = askedEngine();
  return engineNamed(detection.found?.name ?? (asked === 'auto' ? 'docker' : asked));
}
