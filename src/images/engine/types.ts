import type { EngineName } from '../../host/engine.js';

/** A VPC's network as the lab asks for it: a bridge of its own, isolated from every other network of the engine. */
export interface NetworkSpec {
  name: string;
  subnet?: string;
  gateway?: string;
  labels: Record<string, string>;
}

/** A network as the engine shows it, in one shape for both engines. */
export interface NetworkFacts {
  name: string;
  subnet: string | null;
  /** Running container name → its IPv4 address on this network. */
  containers: Record<string, string>;
  labels: Record<string, string>;
}

/**
 * The seam between the lab and its container engine: what differs between Docker and Podman. Calls both spell alike
 * (run, exec, inspect of a container or an image, tag, push, volume, network connect) go through `docker()` of
 * src/images/docker.ts, which runs this engine's CLI.
 */
export interface Engine {
  readonly name: EngineName;
  /** The CLI that drives it. */
  readonly cli: EngineName;
  /** Its name in a sentence: `Docker`, `Podman`. */
  readonly title: string;
  /** `network create` arguments for `spec`; on both engines the network must reach no other network of the engine. */
  networkCreateArgs(spec: NetworkSpec): string[];
  /** A network's facts with its running containers' addresses; null when there is no such network. */
  inspectNetwork(name: string): Promise<NetworkFacts | null>;
  /** The environment kind runs with so that its nodes join `network` (and every kind command uses this engine). */
  kindEnv(network?: string): Record<string, string>;
  /** `push` arguments for `target` in the lab's registry, which serves plain HTTP on 127.0.0.1. */
  pushToLabRegistryArgs(target: string): string[];
  /** An image's ID as `image inspect` gives it, as a digest (`sha256:<hex>`: Docker's spelling; Podman's lacks the prefix). */
  imageDigest(id: string): string;
  /** `stats` arguments printing `<name>\t<memory use>` lines, once. */
  statsArgs(): string[];
  /**
   * The full name an image built or loaded here as `ref` has in this engine's store, as kind must be given it: kind
   * looks a name without a registry up as docker.io's, and Podman stores such an image under localhost/.
   */
  storedImageRef(ref: string): string;
  /**
   * Removes what kind leaves of kind cluster `cluster`'s nodes once they are gone (a failed create, a delete): kind's
   * podman provider makes each node's /var volume before `podman run` and removes it only with a node it finds. The
   * volumes' names, or none.
   */
  removeKindNodeVolumes(cluster: string): Promise<string[]>;
}
