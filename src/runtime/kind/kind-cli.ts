import fs from 'node:fs/promises';
import path from 'node:path';
import { MissingPrerequisiteError } from '../../errors.js';
import { engineEndpointEnv } from '../../host/engine.js';
import { engineNamed, type Engine } from '../../images/engine/index.js';
import { cacheDir } from '../../paths.js';
import { artifactsFromEnv } from '../../provision/artifacts.js';
import { KIND_VERSION, kindBinary, type ProvisionOptions } from '../../provision/index.js';
import { executableName } from '../../provision/platform.js';
import { kindRelease } from '../../provision/recipes.js';
import { run, type RunResult } from '../../util/exec.js';

async function executable(file: string): Promise<boolean> {
  try {
    await fs.access(file, fs.constants.X_OK);
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}

/** The first word of `kind version` that names a release (`kind v0.33.0 go1.25.1 linux/amd64` → v0.33.0). */
export function kindVersionOf(printed: string): string | null {
  return /\bv\d+\.\d+\.\d+(?:-[\w.]+)?\b/.exec(printed)?.[0] ?? null;
}

/**
 * Where the kind CLI is: $OCM_LAB_KIND (taken as it is), else `kind` on PATH when `kind version` says
 * KIND_VERSION, else the provisioning cache (`<cache>/bin/kind-<version>/kind`). Null when none (requireKind
 * then provisions it). A kind on PATH of another version is passed over, and `said` gets one line saying so.
 */
export async function locateKind(env: NodeJS.ProcessEnv = process.env, said: (line: string) => void = () => undefined): Promise<string | null> {
  if (env.OCM_LAB_KIND) return (await executable(env.OCM_LAB_KIND)) ? path.resolve(env.OCM_LAB_KIND) : null;
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const file = path.join(dir, executableName('kind'));
    if (!(await executable(file))) continue;
    const printed = (await run(file, ['version'], { allowFailure: true, timeout: 15_000 }).catch(() => null))?.stdout.trim() ?? '';
    if (kindVersionOf(printed) === KIND_VERSION) return file;
    const version = kindVersionOf(printed) ?? `not a kind that says its version (${printed || 'nothing'})`;
    said(`kind on PATH (${file}) is ${version}, not ${KIND_VERSION}: using kind ${KIND_VERSION} from the ocm-lab cache (downloaded or built)`);
    break;
  }
  const cached = path.join(cacheDir(env), 'bin', `kind-${KIND_VERSION}`, 'kind');
  return (await executable(cached)) ? cached : null;
}

/**
 * Can kind be had here: found, downloadable (kind publishes a release binary for this platform and official artifacts
 * are not ruled out by the environment), or buildable (a Go toolchain on PATH, as the provisioning recipe needs).
 */
export async function kindProvisionable(env: NodeJS.ProcessEnv = process.env): Promise<{ ok: boolean; how: string }> {
  const found = await locateKind(env);
  if (found) return { ok: true, how: `kind is at ${found}` };
  const release = kindRelease();
  if (release?.kind === 'file' && artifactsFromEnv(env) !== 'build') {
    return { ok: true, how: `kind ${KIND_VERSION} can be downloaded (${release.file('kind').fileName} of its release)` };
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    if (await executable(path.join(dir, 'go'))) return { ok: true, how: `kind ${KIND_VERSION} can be built with ${path.join(dir, 'go')}` };
  }
  return { ok: false, how: `no kind CLI ($OCM_LAB_KIND, PATH, the ocm-lab cache) and no Go toolchain to build kind ${KIND_VERSION}` };
}

/** The kind CLI, provisioned (downloaded or built into the cache) when it is not there yet. */
export async function requireKind(options: ProvisionOptions = {}): Promise<string> {
  const found = await locateKind(process.env, options.onProgress);
  if (found) return found;
  try {
    return await kindBinary(options);
  } catch (err) {
    throw new MissingPrerequisiteError(
      `the kind runtime needs the kind CLI ${KIND_VERSION}; none was found and provisioning it failed: ${(err as Error).message}`,
      {
        hint: `install kind ${KIND_VERSION} (go install sigs.k8s.io/kind@${KIND_VERSION}, or https://kind.sigs.k8s.io), or set OCM_LAB_KIND=/path/to/kind`,
        cause: err,
      },
    );
  }
}

/** What Docker says when a published host port was taken between kind's pick and the node's start. */
const PORT_TAKEN = /port is already allocated|address already in use/i;

/**
 * `kind create cluster` for one cluster on `network`: its arguments and the environment it adds, the engine's (kind's
 * provider and the variable that names the network to it) over the proxy's. Pure.
 */
export function kindCreateInvocation(
  engine: Engine,
  opts: { name: string; configFile: string; kubeconfig: string; network: string; proxyEnv?: Record<string, string> },
): { args: string[]; env: Record<string, string> } {
  return {
    args: ['create', 'cluster', '--name', opts.name, '--config', opts.configFile, '--kubeconfig', opts.kubeconfig],
    env: { ...(opts.proxyEnv ?? {}), ...engine.kindEnv(opts.network) },
  };
}

/**
 * The kind CLI for one lab. Every call that writes a kubeconfig names a file of
 * the lab's (one per kind cluster: kind locks the file it writes, and refuses a
 * lock another create holds), so kind never edits the user's ~/.kube/config.
 * Every call runs with the engine's kind environment (on Podman, kind's podman provider for `get` and `delete` too) and
 * the lab engine's endpoint (`DOCKER_HOST` … as at `up`).
 */
export class KindCli {
  constructor(
    readonly binary: string,
    private readonly scratchDir: string,
    private readonly engine: Engine = engineNamed('docker'),
  ) {}

  private async scratchKubeconfig(name: string): Promise<string> {
    await fs.mkdir(this.scratchDir, { recursive: true, mode: 0o700 });
    return path.join(this.scratchDir, `${name}.kubeconfig`);
  }

  private run(args: string[], env: NodeJS.ProcessEnv = {}, allowFailure = false): Promise<RunResult> {
    return run(this.binary, args, { env: { ...process.env, ...engineEndpointEnv(), ...this.engine.kindEnv(), ...env }, allowFailure });
  }

  async clusters(): Promise<string[]> {
    const r = await this.run(['get', 'clusters']);
    return r.stdout
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('No kind clusters'));
  }

  /** `proxyEnv`: the proxy variables kind passes on to the node (kindProxyEnv, proxy-env.ts); they replace the environment's. */
  async create(name: string, configFile: string, network: string, proxyEnv: Record<string, string> = {}): Promise<void> {
    const kubeconfig = await this.scratchKubeconfig(name);
    const { args, env } = kindCreateInvocation(this.engine, { name, configFile, kubeconfig, network, proxyEnv });
    let r = await this.run(args, env, true);
    // kind picks the API server's host port by binding and releasing it; a create beside it may take the same port before
    // Docker publishes it. kind removed the node it made, so once more picks another port.
    if (r.exitCode !== 0 && PORT_TAKEN.test(`${r.stdout}\n${r.stderr}`)) r = await this.run(args, env, true);
    if (r.exitCode !== 0) {
      // kind removed the node it made, but on Podman not the node's volume.
      await this.engine.removeKindNodeVolumes(name).catch(() => []);
      throw new Error(
        `kind create cluster --name ${name} failed (exit status ${r.exitCode}; ${Object.entries(this.engine.kindEnv(network))
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}, config ${configFile}):\n` + kindFailureSummary(`${r.stdout}\n${r.stderr}`),
      );
    }
  }

  async delete(name: string): Promise<void> {
    await this.run(['delete', 'cluster', '--name', name, '--kubeconfig', await this.scratchKubeconfig(name)]);
    await this.engine.removeKindNodeVolumes(name);
  }

  /** The cluster's admin kubeconfig as the host reaches it (127.0.0.1:<port>). */
  async kubeconfig(name: string): Promise<string> {
    return (await this.run(['get', 'kubeconfig', '--name', name])).stdout;
  }
}

/**
 * What kind printed about a failure, without the Go stack traces kubeadm
 * appends (they fill any "last lines" tail and say nothing about the cause).
 */
export function kindFailureSummary(output: string, maxLines = 40): string {
  const lines = output
    .split('\n')
    .filter(
      (l) =>
        l.trim() &&
        !/^\t/.test(l) &&
        !/\.go:\d+/.test(l) &&
        !/^(main\.main|runtime\.(main|goexit)|github\.com\/spf13\/cobra|k8s\.io\/kubernetes\/cmd\/kubeadm\/app\/cmd)/.test(l.trim()),
    );
  const important = lines.filter((l) => /ERROR|error|fail|timed out|unhealthy|refused/i.test(l));
  const picked = important.length ? important : lines;
  return picked.slice(0, maxLines).join('\n');
}
