import type { RunnableImage } from '../images.js';
import type { Container, Pod } from '../types.js';

/** The securityContext fields the nodelet applies (the rest is ignored). */
interface ContainerSecurity {
  runAsUser?: number;
  runAsGroup?: number;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
}
interface PodSecurity {
  runAsUser?: number;
  runAsGroup?: number;
  fsGroup?: number;
  supplementalGroups?: number[];
}

function containerSecurity(c: Container): ContainerSecurity {
  return ((c as Container & { securityContext?: ContainerSecurity }).securityContext ?? {}) as ContainerSecurity;
}
function podSecurity(pod: Pod): PodSecurity {
  return ((pod.spec as Pod['spec'] & { securityContext?: PodSecurity }).securityContext ?? {}) as PodSecurity;
}

export interface ProcessUser {
  uid: number;
  gid: number;
  additionalGids: number[];
}

/**
 * The user a container runs as: runAsUser/runAsGroup of the container, then
 * of the pod, then the image's USER; fsGroup and supplementalGroups as
 * additional groups.
 */
export function processUser(pod: Pod, c: Container, image: RunnableImage | undefined): ProcessUser {
  const cs = containerSecurity(c);
  const ps = podSecurity(pod);
  const uid = cs.runAsUser ?? ps.runAsUser ?? image?.user.uid ?? 0;
  const explicitUser = cs.runAsUser !== undefined || ps.runAsUser !== undefined;
  const gid = cs.runAsGroup ?? ps.runAsGroup ?? (explicitUser ? 0 : (image?.user.gid ?? 0));
  const extra = [...(ps.fsGroup !== undefined ? [ps.fsGroup] : []), ...(ps.supplementalGroups ?? [])].filter((g) => g !== gid);
  return { uid, gid, additionalGids: [...new Set(extra)] };
}

export function processCapabilities(c: Container): { add?: string[]; drop?: string[] } | undefined {
  return containerSecurity(c).capabilities;
}

export function noNewPrivileges(c: Container): boolean {
  return containerSecurity(c).allowPrivilegeEscalation === false;
}

/**
 * Who owns the pod's volume files: the one user all its containers run as
 * (group: fsGroup if set), or 'shared' (readable by all) when they differ.
 */
export function volumeOwner(pod: Pod, resolve: (image: string | undefined) => RunnableImage | undefined): { uid: number; gid: number } | 'shared' {
  const containers = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
  const users = containers.map((c) => processUser(pod, c, resolve(c.image)));
  const uids = new Set(users.map((u) => u.uid));
  if (uids.size > 1) return 'shared';
  const first = users[0] ?? { uid: 0, gid: 0 };
  return { uid: first.uid, gid: podSecurity(pod).fsGroup ?? first.gid };
}
