import { execFile } from 'node:child_process';
import path from 'node:path';

/**
 * A kubeconfig user's `exec` stanza (client.authentication.k8s.io): the credential plugin
 * kubectl runs for EKS, GKE and AKS contexts. ocm-lab runs it the same way for its own
 * requests and writes the stanza, never the token, into the kubeconfigs it makes.
 */
export interface ExecConfig {
  apiVersion: string;
  /** Absolute when the kubeconfig gave a relative path with a separator (resolved against its folder, as client-go does). */
  command: string;
  args?: string[];
  env?: { name: string; value: string }[];
  interactiveMode?: 'Never' | 'IfAvailable' | 'Always';
  provideClusterInfo?: boolean;
  installHint?: string;
}

const API_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'];
const INTERACTIVE_MODES = ['Never', 'IfAvailable', 'Always'];
/** A token this close to its expirationTimestamp is fetched again before use. */
const EXPIRY_MARGIN_MS = 5_000;
const PLUGIN_TIMEOUT_MS = 60_000;

export class ExecCredentialError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExecCredentialError';
  }
}

const isString = (v: unknown): v is string => typeof v === 'string';

/** The stanza of a kubeconfig user, checked field by field; `where` names the context in errors. */
export function execConfigOf(exec: Record<string, unknown>, kubeconfigDir: string, where: string): ExecConfig {
  const bad = (field: string, why: string) => new ExecCredentialError(`${where}: users[].user.exec.${field} ${why}`);
  const { apiVersion, command, args, env, interactiveMode, provideClusterInfo, installHint } = exec;
  if (!isString(apiVersion) || !API_VERSIONS.includes(apiVersion))
    throw bad('apiVersion', `is ${JSON.stringify(apiVersion)}: use one of ${API_VERSIONS.join(', ')}`);
  if (!isString(command) || !command) throw bad('command', 'is missing');
  if (args !== undefined && !(Array.isArray(args) && args.every(isString))) throw bad('args', 'must be a list of strings');
  const envList = env ?? [];
  if (!Array.isArray(envList) || !envList.every((e) => isString((e as { name?: unknown })?.name) && isString((e as { value?: unknown })?.value))) {
    throw bad('env', 'must be a list of {name, value} strings');
  }
  if (interactiveMode !== undefined && !(isString(interactiveMode) && INTERACTIVE_MODES.includes(interactiveMode))) {
    throw bad('interactiveMode', `is ${JSON.stringify(interactiveMode)}: use one of ${INTERACTIVE_MODES.join(', ')}`);
  }
  if (interactiveMode === undefined && apiVersion === 'client.authentication.k8s.io/v1')
    throw bad('interactiveMode', 'is required by client.authentication.k8s.io/v1');
  const resolved = !path.isAbsolute(command) && command.includes('/') ? path.resolve(kubeconfigDir, command) : command;
  return {
    apiVersion,
    command: resolved,
    ...(args ? { args: args as string[] } : {}),
    ...(envList.length ? { env: (envList as { name: string; value: string }[]).map(({ name, value }) => ({ name, value })) } : {}),
    ...(interactiveMode ? { interactiveMode: interactiveMode as ExecConfig['interactiveMode'] } : {}),
    ...(provideClusterInfo === true ? { provideClusterInfo: true } : {}),
    ...(isString(installHint) && installHint ? { installHint } : {}),
  };
}

/** The stanza as a kubeconfig user holds it. */
export function execStanza(config: ExecConfig): Record<string, unknown> {
  return { ...config };
}

interface Issued {
  token: string;
  /** ms since the epoch; none: valid until a request is refused. */
  expiresAt?: number;
}

/** Tokens per plugin invocation, shared by every client of this process, as client-go shares its authenticators. */
const issuedTokens = new Map<string, Issued>();

/** What the plugin may learn of the cluster (provideClusterInfo). */
export interface ExecCluster {
  context: string;
  server: string;
  caPem?: string;
}

/**
 * Runs a credential plugin as kubectl does, non-interactively: KUBERNETES_EXEC_INFO on the
 * environment, its `status.token` kept until `status.expirationTimestamp`, run again after
 * that or when the API server refuses the token.
 */
export class ExecCredentials {
  private readonly key: string;
  private pending: Promise<Issued> | undefined;

  constructor(
    readonly config: ExecConfig,
    private readonly cluster: ExecCluster,
    private readonly now: () => number = Date.now,
  ) {
    this.key = JSON.stringify([config.command, config.args ?? [], config.env ?? [], cluster.server]);
  }

  async token(): Promise<string> {
    const cached = issuedTokens.get(this.key);
    if (cached && (cached.expiresAt === undefined || cached.expiresAt - EXPIRY_MARGIN_MS > this.now())) return cached.token;
    this.pending ??= this.run().finally(() => (this.pending = undefined));
    const issued = await this.pending;
    issuedTokens.set(this.key, issued);
    return issued.token;
  }

  /** The API server answered 401: the next request runs the plugin again. */
  invalidate(): void {
    issuedTokens.delete(this.key);
  }

  private describe(): string {
    return `context '${this.cluster.context}': credential plugin ${[this.config.command, ...(this.config.args ?? [])].join(' ')}`;
  }

  private async run(): Promise<Issued> {
    if (this.config.interactiveMode === 'Always') {
      throw new ExecCredentialError(`${this.describe()} asks for interactiveMode Always, and ocm-lab runs plugins without a terminal`);
    }
    const info = {
      apiVersion: this.config.apiVersion,
      kind: 'ExecCredential',
      spec: {
        interactive: false,
        ...(this.config.provideClusterInfo
          ? {
              cluster: {
                server: this.cluster.server,
                ...(this.cluster.caPem ? { 'certificate-authority-data': Buffer.from(this.cluster.caPem).toString('base64') } : {}),
              },
            }
          : {}),
      },
    };
    const env = { ...process.env, ...Object.fromEntries((this.config.env ?? []).map((e) => [e.name, e.value])), KUBERNETES_EXEC_INFO: JSON.stringify(info) };
    const { stdout, stderr, failure } = await new Promise<{ stdout: string; stderr: string; failure?: Error & { code?: unknown } }>((resolve) => {
      const child = execFile(this.config.command, this.config.args ?? [], { env, timeout: PLUGIN_TIMEOUT_MS, maxBuffer: 4 << 20 }, (err, out, errOut) =>
        resolve({ stdout: String(out), stderr: String(errOut), ...(err ? { failure: err } : {}) }),
      );
      child.stdin?.end();
    });
    if (failure) {
      const notFound = failure.code === 'ENOENT';
      const said = stderr.trim() || failure.message;
      throw new ExecCredentialError(
        notFound
          ? `${this.describe()}: not found${this.config.installHint ? ` (${this.config.installHint.trim()})` : ''}`
          : `${this.describe()} failed (${failure.code ?? 'killed'}): ${said.slice(0, 2000)}`,
      );
    }
    return this.parse(stdout);
  }

  private parse(stdout: string): Issued {
    let credential: { apiVersion?: unknown; kind?: unknown; status?: { token?: unknown; expirationTimestamp?: unknown; clientCertificateData?: unknown } };
    try {
      credential = JSON.parse(stdout) as typeof credential;
    } catch {
      throw new ExecCredentialError(`${this.describe()} printed no ExecCredential JSON: ${stdout.trim().slice(0, 300)}`);
    }
    if (credential.kind !== 'ExecCredential' || credential.apiVersion !== this.config.apiVersion) {
      throw new ExecCredentialError(
        `${this.describe()} printed ${String(credential.apiVersion)} ${String(credential.kind)}, not ${this.config.apiVersion} ExecCredential`,
      );
    }
    const token = credential.status?.token;
    if (!isString(token) || !token) {
      const why = credential.status?.clientCertificateData ? 'a client certificate, which ocm-lab does not use' : 'no status.token';
      throw new ExecCredentialError(`${this.describe()} returned ${why}`);
    }
    const expiry = credential.status?.expirationTimestamp;
    if (expiry === undefined) return { token };
    const expiresAt = isString(expiry) ? Date.parse(expiry) : NaN;
    if (Number.isNaN(expiresAt)) throw new ExecCredentialError(`${this.describe()}: status.expirationTimestamp ${JSON.stringify(expiry)} is not RFC 3339`);
    return { token, expiresAt };
  }
}
