import { LABEL_ROLE } from '../docker.js';

/**
 * The image registry every lab on this machine shares (one container, one
 * volume): names and labels in one place, so up, down and `ocm-lab registry`
 * agree. Not the runtime registry of src/runtime/registry.ts.
 */

/** The container; also the name nodes reach it by on every VPC network it is attached to. */
export const REGISTRY_CONTAINER = 'ocm-lab-registry';
/** Where its blobs live: survives `down`, goes with `ocm-lab registry rm`. */
export const REGISTRY_VOLUME = 'ocm-lab-registry-data';
/** The port the registry listens on inside its container (and on every VPC network). */
export const REGISTRY_INTERNAL_PORT = 5000;
/** The port it is published on at 127.0.0.1 when that one is free and none is asked for (kind's local-registry guide uses it too). */
export const DEFAULT_REGISTRY_PORT = 5001;
/** The setting that asks for a port of its own. */
export const REGISTRY_PORT_ENV = 'OCM_LAB_REGISTRY_PORT';

/** The role label our container and volume carry: what tells ours from another tool's of the same name. */
export const REGISTRY_LABELS: Record<string, string> = { [LABEL_ROLE]: 'image-registry' };

export function isOurs(labels: Record<string, string> | null | undefined): boolean {
  return Object.entries(REGISTRY_LABELS).every(([k, v]) => labels?.[k] === v);
}

/** `<name>:5000`: the registry as containerd in a node and pods on the VPC networks reach it. */
export function registryInClusterHost(): string {
  return `${REGISTRY_CONTAINER}:${REGISTRY_INTERNAL_PORT}`;
}
