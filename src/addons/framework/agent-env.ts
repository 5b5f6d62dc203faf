import { InvalidInputError } from '../../errors.js';
import { KubeClient } from '../../kube/client.js';

/** A client for the cluster the process runs in: $KUBECONFIG if set, else the pod's in-cluster ServiceAccount credentials. */
export async function inPodClient(flag: string): Promise<KubeClient> {
  const file = process.env.KUBECONFIG;
  if (file) return KubeClient.fromKubeconfig(file);
  try {
    return await KubeClient.inCluster();
  } catch (err) {
    throw new InvalidInputError(`${flag} needs credentials for the managed cluster: $KUBECONFIG is not set and ${(err as Error).message}`, {
      hint: 'run it as a pod (in-cluster credentials), or set KUBECONFIG',
    });
  }
}

/** A client from a kubeconfig a flag names. */
export async function clientFromFlag(flag: string, file: string | undefined): Promise<KubeClient> {
  if (!file) throw new InvalidInputError(`--${flag} is required`);
  try {
    return await KubeClient.fromKubeconfig(file);
  } catch (err) {
    throw new InvalidInputError(`--${flag} ${file}: ${(err as Error).message}`, {
      hint: 'the kubeconfig must exist and name a current context with a server and credentials',
    });
  }
}
