/**
 * Every failure the CLI reports maps to one of these exit codes, so scripts can
 * tell bad input from a missing prerequisite from a component that never came up.
 */
export const ExitCode = {
  ok: 0,
  failure: 1,
  invalidInput: 2,
  missingPrerequisite: 3,
  notReady: 4,
  notFound: 5,
  conflict: 6,
  /** A download or image whose bytes do not match their published checksum or required digest. */
  integrity: 7,
  /** A cluster cannot pull or run an image the lab needs there (up --runtime existing checks before it installs anything). */
  imageUnavailable: 8,
  /** The proxy $HTTPS_PROXY / $HTTP_PROXY names refused the connection or a CONNECT (src/util/outbound-proxy.ts). */
  proxy: 9,
  /** The terminal went away (hang-up, or its input ended) while a command waited for a person's answer: 128 + SIGHUP. */
  inputClosed: 129,
  /** A person pressed Ctrl-C and the command stopped where it was: 128 + SIGINT. */
  interrupted: 130,
} as const;

export type ExitCodeName = keyof typeof ExitCode;

export class LabError extends Error {
  readonly exitCode: number;
  /** What the user can do about it; printed after the message. */
  readonly hint: string | undefined;

  constructor(kind: ExitCodeName, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'LabError';
    this.exitCode = ExitCode[kind];
    this.hint = options.hint;
  }
}

export class InvalidInputError extends LabError {
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super('invalidInput', message, options);
    this.name = 'InvalidInputError';
  }
}

export class MissingPrerequisiteError extends LabError {
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super('missingPrerequisite', message, options);
    this.name = 'MissingPrerequisiteError';
  }
}

export class NotReadyError extends LabError {
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super('notReady', message, options);
    this.name = 'NotReadyError';
  }
}

export class NotFoundError extends LabError {
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super('notFound', message, options);
    this.name = 'NotFoundError';
  }
}

export class ConflictError extends LabError {
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super('conflict', message, options);
    this.name = 'ConflictError';
  }
}

/** A cluster cannot pull or run an image the lab would run there: named with the cluster and what its node said. */
export class ImageUnavailableError extends LabError {
  constructor(message: string, options: { hint?: string } = {}) {
    super('imageUnavailable', message, options);
    this.name = 'ImageUnavailableError';
  }
}

/** Downloaded bytes are not what was published or pinned: nothing of them is kept. */
export class DigestMismatchError extends LabError {
  constructor(
    /** What was fetched: an image reference, a blob of one, or a download URL. */
    readonly artifact: string,
    readonly expected: string,
    readonly actual: string,
    options: { hint?: string } = {},
  ) {
    super('integrity', `${artifact}: digest mismatch: expected ${expected}, got ${actual}; nothing was cached`, {
      hint:
        options.hint ??
        'the server sent other bytes than were published or pinned; if a mirror serves its own builds, ' +
          'name their digests under digests: in a mirrors file, or use --artifacts build',
    });
    this.name = 'DigestMismatchError';
  }
}

/** An image registry did not serve what was asked: no answer, a timeout, or an HTTP error status. */
export class RegistryUnavailableError extends LabError {
  constructor(
    readonly host: string,
    /** What went wrong: `HTTP 404 for …`, `ECONNREFUSED`, `no answer within 5 s`. */
    readonly reason: string,
    /** Nothing answered at all: do not ask this host again in the same run. */
    readonly unreachable: boolean,
  ) {
    super('missingPrerequisite', `registry ${host} did not serve the image: ${reason}`, {
      hint: `use --artifacts build to build the binaries here, or name a registry that answers for ${host} in a mirrors file (registries: in --mirrors FILE)`,
    });
    this.name = 'RegistryUnavailableError';
  }
}

/**
 * The proxy the environment names ($https_proxy, $HTTPS_PROXY, …) could not be used for an outbound request: it refused
 * the connection, closed it, or answered CONNECT with a status other than 2xx. Named with its URL (credentials masked)
 * and the URL it was asked for; nothing of the request was kept.
 */
export class ProxyError extends LabError {
  constructor(
    /** The proxy as it may be printed: `http://proxy:3128`, `http://***@proxy:3128` when it carries credentials. */
    readonly proxy: string,
    /** The variable it came from: `HTTPS_PROXY`, `https_proxy`, … */
    readonly variable: string,
    /** The URL the request was for. */
    readonly url: string,
    /** What went wrong: `refused the connection (ECONNREFUSED)`, `answered CONNECT dl.k8s.io:443 with HTTP 407 …`. */
    readonly reason: string,
  ) {
    super('proxy', `proxy ${proxy} (${variable}) ${reason}, for ${url}`, {
      hint:
        `check ${variable}: the proxy must run, be reachable from this machine and allow CONNECT to ${hostOf(url)}; ` +
        `or add ${hostOf(url)} to NO_PROXY to go there directly, or unset ${variable} (docs/platforms.md, "Proxies")`,
    });
    this.name = 'ProxyError';
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

export function exitCodeOf(err: unknown): number {
  return err instanceof LabError ? err.exitCode : ExitCode.failure;
}
