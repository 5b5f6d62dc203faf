import { detectEngine, type EngineName } from '../../host/engine.js';
import { dockerEngineSeam } from './docker.js';
import { podmanEngineSeam } from './podman.js';
import type { Engine } from './types.js';

export type { Engine, NetworkFacts } from './types.js';

/** The seam of the engine named. */
export function engineNamed(name: EngineName): Engine {
  return name === 'podman' ? podmanEngineSeam : dockerEngineSeam;
}

/**
 * The seam of the engine src/host/engine.ts finds; Docker's when none answers, so that a call made anyway fails as
 * `docker …` did before the seam (preflight has said why by then).
 */
export async function currentEngine(): Promise<Engine> {
  const detection = await detectEngine();
  return engineNamed(detection.found?.name ?? 'docker');
}
