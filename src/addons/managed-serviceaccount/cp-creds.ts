import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ApiError, KubeClient } from '../../kube/client.js';
import { fromBase64, getOrNull, type KubeObject, objectPath } from '../../kube/objects.js';
import { readKubeconfig } from '../../kube/kubeconfig.js';
import { OCM_CLUSTER_MANAGER_NAME } from '../../ocm/clusterprofile.js';

/**
 * ocm-lab's build of managed-serviceaccount's ClusterProfile credentials plugin (upstream's `cp-creds`,
 * cmd/clusterprofile-credentials-plugin at v0.10.0): a client-go exec plugin that answers with the token
 * of the Secret `<clusterName>-<managed-serviceaccount>` the credential sync wrote into the consumer's
 * namespace on the hub. Same flag, output, messages and exit codes as upstream's.
 */
const PLUGIN_FLAG = 'managed-serviceaccount';
const USAGE = `Usage of cp-creds:\n      --${PLUGIN_FLAG} string   Name of the ManagedServiceAccount to access spoke cluster (required)\n`;
const EXEC_API = 'client.authentication.k8s.io/v1';
const SERVICE_ACCOUNT_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** A failure upstream's plugin reports as `[open-cluster-management] <message>` with exit code 1. */
class PluginError extends Error {}

export type FlagParse = { msa: string } | { help: true } | { usageError: string };

/** The command line as pflag reads it: `--managed-serviceaccount=X`, `--managed-serviceaccount X`, `-h`/`--help`. */
export function parsePluginFlags(args: readonly string[]): FlagParse {
  let msa = '';
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-h' || a === '--help') return { help: true };
    if (a === '--') break;
    if (a === `--${PLUGIN_FLAG}`) {
      if (i + 1 >= args.length) return { usageError: `flag needs an argument: --${PLUGIN_FLAG}` };
      msa = args[++i]!;
    } else if (a.startsWith(`--${PLUGIN_FLAG}=`)) msa = a.slice(PLUGIN_FLAG.length + 3);
    else if (a.startsWith('--')) return { usageError: `unknown flag: ${a.split('=')[0]}` };
    else if (a.startsWith('-') && a.length > 1) return { usageError: `unknown shorthand flag: '${a[1]}' in ${a}` };
  }
  return { msa };
}

interface ExecCredentialInput {
  apiVersion?: string;
  kind?: string;
  spec?: { cluster?: { server?: string; config?: unknown } };
}

/** KUBERNETES_EXEC_INFO checked as client-go's LoadExecCredentialFromEnv and the inventory API's plugin core check it. */
export function readExecInfo(env: NodeJS.ProcessEnv): ExecCredentialInput {
  const fail = (why: string) => new PluginError(`failed to read KUBERNETES_EXEC_INFO: ${why}`);
  const text = env.KUBERNETES_EXEC_INFO ?? '';
  if (!text) throw fail('KUBERNETES_EXEC_INFO env var is unset or empty');
  let info: ExecCredentialInput;
  try {
    info = JSON.parse(text) as ExecCredentialInput;
  } catch (err) {
    throw fail(`decode: ${(err as Error).message}`);
  }
  if (typeof info !== 'object' || info === null || !info.kind || !info.apiVersion) throw fail(`decode: Object 'Kind' is missing in '${text}'`);
  const [group, version] = info.apiVersion.split('/');
  if (group !== 'client.authentication.k8s.io' || info.kind !== 'ExecCredential')
    throw fail(`invalid group/kind: wanted ExecCredential.client.authentication.k8s.io, got ${info.kind}.${info.apiVersion.split('/')[0]}`);
  if (version !== 'v1' && version !== 'v1beta1')
    throw fail(`decode: no kind "ExecCredential" is registered for version "${info.apiVersion}" in scheme "k8s.io/client-go/tools/auth/exec/exec.go:38"`);
  if (!info.spec?.cluster) throw fail('ExecCredential does not contain cluster information');
  if (version !== 'v1') throw new PluginError(`unexpected ExecCredential type (expect v1), got *${version}.ExecCredential`);
  const server = (info.spec.cluster.server ?? '').trim();
  if (!server || server === 'null') throw new PluginError('spec.cluster.server is missing in KUBERNETES_EXEC_INFO');
  return info;
}

/** `clusterName` of `spec.cluster.config` (the ClusterProfile's `client.authentication.k8s.io/exec` extension). */
export function clusterNameOf(info: ExecCredentialInput): string {
  const config = info.spec?.cluster?.config;
  if (config === undefined || config === null) throw new PluginError('missing ExecCredential.Spec.Cluster.Config');
  if (typeof config !== 'object' || Array.isArray(config)) {
    const jsonType = Array.isArray(config) ? 'array' : typeof config;
    throw new PluginError(`invalid ExecCredential.Spec.Cluster.Config: json: cannot unmarshal ${jsonType} into Go value of type main.execClusterConfig`);
  }
  const name = (config as { clusterName?: unknown }).clusterName;
  if (name !== undefined && typeof name !== 'string')
    throw new PluginError(
      `invalid ExecCredential.Spec.Cluster.Config: json: cannot unmarshal ${typeof name} into Go struct field execClusterConfig.clusterName of type string`,
    );
  if (!name) throw new PluginError('missing clusterName in ExecCredential.Spec.Cluster.Config');
  return name;
}

/** The kubeconfig the plugin reads: $KUBECONFIG taken as one path (as upstream's BuildConfigFromFlags), else ~/.kube/config. */
function kubeconfigPath(env: NodeJS.ProcessEnv): string {
  return env.KUBECONFIG || path.join(env.HOME ?? os.homedir(), '.kube', 'config');
}

/** Where the synced Secret is looked for: $NAMESPACE, the pod's namespace, the kubeconfig context's, else `default`. */
export async function inferNamespace(env: NodeJS.ProcessEnv, namespaceFile = SERVICE_ACCOUNT_NAMESPACE_FILE): Promise<string> {
  if (env.NAMESPACE?.trim()) return env.NAMESPACE.trim();
  const fromPod = (await readFile(namespaceFile, 'utf8').catch(() => '')).trim();
  if (fromPod) return fromPod;
  const ctx = await readKubeconfig(kubeconfigPath(env)).catch(() => undefined);
  return ctx?.namespace?.trim() || 'default';
}

/** The hub client: in-cluster first, then the kubeconfig. */
async function pluginClient(env: NodeJS.ProcessEnv): Promise<KubeClient> {
  try {
    return await KubeClient.inCluster(env);
  } catch {
    try {
      return await KubeClient.fromKubeconfig(kubeconfigPath(env));
    } catch (err) {
      throw new Error(`failed to build kube client config: ${(err as Error).message}`);
    }
  }
}

/** The token of `<namespace>/<clusterName>-<msa>`. */
async function syncedToken(hub: KubeClient, namespace: string, cluster: string, msa: string): Promise<string> {
  const name = `${cluster}-${msa}`;
  const where = `${namespace}/${name}`;
  let secret: (KubeObject & { data?: Record<string, string> }) | null;
  try {
    secret = await getOrNull(hub, objectPath({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace } }));
  } catch (err) {
    throw new PluginError(`failed to get synced credential secret ${where}: ${err instanceof ApiError ? err.serverMessage : (err as Error).message}`);
  }
  if (!secret) throw new PluginError(`failed to get synced credential secret ${where}: secrets "${name}" not found`);
  const token = fromBase64(secret.data?.token);
  if (!token) throw new PluginError(`secret ${where} missing or empty "token" key`);
  return token;
}

/** The answer on stdout, as Go marshals client.authentication.k8s.io/v1 ExecCredential (no expiry: upstream sets none). */
export function execCredentialJson(token: string): string {
  return `${JSON.stringify({ kind: 'ExecCredential', apiVersion: EXEC_API, spec: { interactive: false }, status: { token } })}\n`;
}

export interface PluginIo {
  env: NodeJS.ProcessEnv;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** The whole plugin; returns its exit code. */
export async function runCpCreds(args: readonly string[], io: PluginIo): Promise<number> {
  const flags = parsePluginFlags(args);
  if ('help' in flags) {
    io.stderr(USAGE);
    return 0;
  }
  if ('usageError' in flags) {
    io.stderr(`${flags.usageError}\n${USAGE}`);
    return 2;
  }
  if (!flags.msa) {
    io.stderr(`Error: --${PLUGIN_FLAG} flag is required\n${USAGE}`);
    return 1;
  }
  let hub: KubeClient;
  try {
    hub = await pluginClient(io.env);
  } catch (err) {
    io.stderr(`Error initializing provider: ${(err as Error).message}\n`);
    return 1;
  }
  try {
    const info = readExecInfo(io.env);
    const cluster = clusterNameOf(info);
    const token = await syncedToken(hub, await inferNamespace(io.env), cluster, flags.msa);
    io.stdout(execCredentialJson(token));
    return 0;
  } catch (err) {
    io.stderr(`[${OCM_CLUSTER_MANAGER_NAME}] ${(err as Error).message}\n`);
    return 1;
  } finally {
    hub.close();
  }
}
