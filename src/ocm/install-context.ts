import type { LabConfig } from '../config/index.js';
import type { LabCluster, UpOptions } from '../runtime/types.js';

/** What the install steps work from: the lab file, the options of `up`, and the clusters the runtime provided. */
export interface InstallContext {
  config: LabConfig;
  options: UpOptions;
  /** Set once the runtime's steps are done (`Runtime.clusters`). */
  clusters: LabCluster[];
}

export const DEFAULT_INSTALL_TIMEOUT_MS = 150_000;

export function timeoutOf(ctx: InstallContext): number {
  return ctx.options.readyTimeoutMs ?? DEFAULT_INSTALL_TIMEOUT_MS;
}

export function hubOf(ctx: Pick<InstallContext, 'clusters'>): LabCluster {
  const hub = ctx.clusters.find((c) => c.hub);
  if (!hub) throw new Error('internal: the runtime provided no hub cluster');
  return hub;
}

export function spokesOf(ctx: Pick<InstallContext, 'clusters'>): LabCluster[] {
  return ctx.clusters.filter((c) => !c.hub);
}
