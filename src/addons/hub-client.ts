import { hubAdminKubeconfig } from '../config/defaults.js';
import { NotFoundError, InvalidInputError } from '../errors.js';
import type { LabConfig } from '../config/index.js';
import { KubeClient } from '../kube/client.js';
import { kubectlPortForward } from '../kube/port-forward.js';
import { ensureBinaries } from '../provision/resolve.js';
import type { PodPortForwarder } from './cluster-proxy/hub-tunnel.js';
import fs from 'node:fs/promises';

/**
 * A client for the lab's hub: with `kubeconfig`, as that hub user (its current
 * context); without, as the lab's admin.
 */
export async function hubClientFor(config: LabConfig, kubeconfig?: string): Promise<KubeClient> {
  const file = kubeconfig ?? hubAdminKubeconfig(config);
  try {
    await fs.access(file);
  } catch {
    if (kubeconfig) throw new InvalidInputError(`--hub-kubeconfig ${kubeconfig}: no such file`);
    throw new NotFoundError(`lab '${config.name}' is not up (no hub kubeconfig at ${file})`, { hint: "run 'ocm-lab up' first" });
  }
  try {
    return await KubeClient.fromKubeconfig(file);
  } catch (err) {
    throw new InvalidInputError(`${file}: ${(err as Error).message}`, { hint: 'the kubeconfig must name a current context with a server and credentials' });
  }
}

/** Port-forwards to hub pods from the operator's machine, as the same hub user as hubClientFor(config, kubeconfig). */
export function hubPortForwarder(config: LabConfig, kubeconfig?: string): PodPortForwarder {
  const file = kubeconfig ?? hubAdminKubeconfig(config);
  return async (namespace, pod, port) => {
    const { kubectl } = await ensureBinaries(['kubectl'], { kubernetesVersion: config.kubernetesVersion });
    return kubectlPortForward({ kubectl, kubeconfig: file, namespace, target: `pod/${pod}`, port });
  };
}
