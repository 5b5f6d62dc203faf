import path from 'node:path';

/**
 * Resolves a path as a container sees it (e.g. a mountPath such as
 * /var/run/secrets/kubernetes.io/serviceaccount/token) to the file the
 * nodelet materialised for it: under $OCM_LAB_POD_ROOT when the process runs
 * on the nodelet, unchanged in a real container (kind) or outside any pod.
 */
export function containerPath(p: string, env: NodeJS.ProcessEnv = process.env): string {
  const root = env.OCM_LAB_POD_ROOT;
  if (!root || !path.isAbsolute(p)) return p;
  return path.join(root, p);
}
