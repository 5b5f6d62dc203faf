import crypto from 'node:crypto';

/**
 * Names of a pod's network resources. A pod namespace is `ocmlab.<lab>.p-<cluster>-<uid10>`:
 * it starts with the lab's namespace prefix and holds no further dot, so `down`'s search for
 * leftovers (`ocmlab.<lab>.*` without another dot) removes it even when the nodelet never could.
 */

/** The first 10 hex digits of a pod UID (a UUID); a digest of it when it is not hex. */
export function uidKey(uid: string): string {
  const hex = uid.replace(/-/g, '').toLowerCase();
  return /^[0-9a-f]{10}/.test(hex) ? hex.slice(0, 10) : crypto.createHash('sha256').update(uid).digest('hex').slice(0, 10);
}

export function podNetnsPrefix(labName: string, clusterName: string): string {
  return `ocmlab.${labName}.p-${clusterName}-`;
}

export function podNetnsName(labName: string, clusterName: string, uid: string): string {
  return `${podNetnsPrefix(labName, clusterName)}${uidKey(uid)}`;
}

export function netnsPath(netns: string): string {
  return `/var/run/netns/${netns}`;
}

/**
 * The VPC-side end of a pod's veth: `vp` + 10 hex digits of a digest of lab, cluster
 * and pod, so it fits IFNAMSIZ and is unique in a VPC namespace that several clusters share.
 */
export function vpcVethName(labName: string, clusterName: string, uid: string): string {
  return `vp${crypto
    .createHash('sha256')
    .update(`${labName}/${clusterName}/${uidKey(uid)}`)
    .digest('hex')
    .slice(0, 10)}`;
}

/** The alias written on the VPC-side veth, so a nodelet can tell its own links from another cluster's. */
export function vethAlias(labName: string, clusterName: string, uid: string): string {
  return `ocm-lab:${labName}:${clusterName}:${uidKey(uid)}`;
}

/** The pod end of the veth, inside the pod namespace. */
export const POD_INTERFACE = 'eth0';
/** The pod's next hop: link-local, answered by proxy ARP on the VPC end, so pods need no gateway address of their own range. */
export const POD_GATEWAY = '169.254.1.1';
