/**
 * Why a container cannot start yet; `reason` is what the kubelet reports in
 * the container's waiting state (CreateContainerConfigError, ErrImagePull, …).
 */
export class ContainerStartError extends Error {
  constructor(
    readonly reason: string,
    message: string,
    /** False when retrying cannot help (the pod spec itself is wrong). */
    readonly retryable = true,
  ) {
    super(message);
    this.name = 'ContainerStartError';
  }
}
