import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import { writeFileAtomic } from '../util/atomic-file.js';
import { ExecCredentialError, execConfigOf, execStanza, type ExecConfig } from './exec-credential.js';

/** One context of a kubeconfig: a cluster endpoint and a client certificate or token. */
export interface KubeconfigEntry {
  /** Used as the cluster, user and context name. */
  name: string;
  server: string;
  caPem: string;
  clientCertPem?: string;
  clientKeyPem?: string;
  token?: string;
  /** The user's credential plugin, written as it is (the token it gives expires; the plugin does not). */
  exec?: ExecConfig;
  /** Name to verify the server certificate against when it differs from the server's host. */
  tlsServerName?: string;
}

interface KubeconfigDoc {
  apiVersion: 'v1';
  kind: 'Config';
  preferences: Record<string, never>;
  clusters: { name: string; cluster: Record<string, unknown> }[];
  users: { name: string; user: Record<string, unknown> }[];
  contexts: { name: string; context: { cluster: string; user: string; namespace?: string } }[];
  'current-context': string;
}

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

function buildKubeconfig(entries: readonly KubeconfigEntry[], currentContext = entries[0]?.name ?? ''): KubeconfigDoc {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    clusters: entries.map((e) => ({
      name: e.name,
      cluster: {
        server: e.server,
        'certificate-authority-data': b64(e.caPem),
        ...(e.tlsServerName ? { 'tls-server-name': e.tlsServerName } : {}),
      },
    })),
    users: entries.map((e) => ({
      name: e.name,
      user: {
        ...(e.clientCertPem ? { 'client-certificate-data': b64(e.clientCertPem) } : {}),
        ...(e.clientKeyPem ? { 'client-key-data': b64(e.clientKeyPem) } : {}),
        ...(e.token ? { token: e.token } : {}),
        ...(e.exec ? { exec: execStanza(e.exec) } : {}),
      },
    })),
    contexts: entries.map((e) => ({ name: e.name, context: { cluster: e.name, user: e.name } })),
    'current-context': currentContext,
  };
}

export function renderKubeconfig(entries: readonly KubeconfigEntry[], currentContext?: string): string {
  return YAML.stringify(buildKubeconfig(entries, currentContext));
}

/** Kubeconfigs hold credentials: written atomically, mode 0600. */
export async function writeKubeconfig(file: string, entries: readonly KubeconfigEntry[], currentContext?: string): Promise<void> {
  await writeCredentialFile(file, renderKubeconfig(entries, currentContext));
}

export function writeCredentialFile(file: string, contents: string): Promise<void> {
  return writeFileAtomic(file, contents, 0o600);
}

/**
 * Merges lab contexts into an existing kubeconfig document: entries with the
 * same names are replaced, everything else is kept as it was.
 */
export function mergeKubeconfigText(existingText: string | null, entries: readonly KubeconfigEntry[]): { text: string; replaced: string[] } {
  const ours = buildKubeconfig(entries);
  const base = existingText && existingText.trim() ? ((YAML.parse(existingText) as Partial<KubeconfigDoc> | null) ?? {}) : {};
  const names = new Set(entries.map((e) => e.name));
  const replaced = [...new Set([...(base.contexts ?? []), ...(base.clusters ?? []), ...(base.users ?? [])].map((x) => x.name))].filter((n) => names.has(n));
  const keep = <T extends { name: string }>(list: T[] | undefined) => (list ?? []).filter((x) => !names.has(x.name));
  const merged = {
    ...base,
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [...keep(base.clusters), ...ours.clusters],
    users: [...keep(base.users), ...ours.users],
    contexts: [...keep(base.contexts), ...ours.contexts],
    'current-context': base['current-context'] || ours['current-context'],
  };
  return { text: YAML.stringify(merged), replaced };
}

/**
 * One context of a kubeconfig as the lab uses it: inline `*-data` decoded, file
 * references (relative to the kubeconfig's folder) read, except `tokenFile`,
 * which is only resolved to an absolute path because projected tokens are renewed.
 */
export interface KubeconfigContext {
  /** The context's name. */
  context: string;
  namespace?: string;
  server: string;
  caPem?: string;
  tlsServerName?: string;
  certPem?: string;
  keyPem?: string;
  token?: string;
  /** Absolute path of the user's `tokenFile` (only when there is no `token`). */
  tokenFile?: string;
  /** The user's credential plugin (`users[].user.exec`), checked but not run. */
  exec?: ExecConfig;
  /** The user authenticates through something the lab never runs. */
  externalAuth?: 'auth provider';
}

/** A kubeconfig that cannot be read or has no such context; `contexts` lists the ones it has, for hints. */
export class KubeconfigError extends Error {
  constructor(
    message: string,
    readonly contexts: readonly string[] = [],
  ) {
    super(message);
    this.name = 'KubeconfigError';
  }
}

interface KubeconfigYaml {
  'current-context'?: string;
  contexts?: { name: string; context?: { cluster?: string; user?: string; namespace?: string } }[];
  clusters?: { name: string; cluster?: Record<string, unknown> }[];
  users?: { name: string; user?: Record<string, unknown> }[];
}

/** Where a kubeconfig text came from: `source` names it in errors, `dir` resolves its relative file references. */
export interface KubeconfigOrigin {
  source: string;
  dir: string;
}

function parseKubeconfigText(text: string, origin: KubeconfigOrigin): KubeconfigYaml {
  try {
    return (YAML.parse(text) as KubeconfigYaml | null) ?? {};
  } catch (err) {
    throw new KubeconfigError(`${origin.source}: not YAML: ${(err as Error).message}`);
  }
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value ? value : undefined);

function dataOrFile(origin: KubeconfigOrigin, where: string, data: unknown, file: unknown, what: string): string | undefined {
  if (text(data)) return Buffer.from(text(data)!, 'base64').toString('utf8');
  if (!text(file)) return undefined;
  const p = path.resolve(origin.dir, text(file)!);
  try {
    return readFileSync(p, 'utf8');
  } catch (err) {
    throw new KubeconfigError(`${where}: cannot read its ${what} ${p}: ${(err as Error).message}`);
  }
}

function execOf(exec: unknown, origin: KubeconfigOrigin, where: string, names: string[]): ExecConfig {
  if (typeof exec !== 'object' || exec === null) throw new KubeconfigError(`${where}: users[].user.exec is not a mapping`, names);
  try {
    return execConfigOf(exec as Record<string, unknown>, origin.dir, where);
  } catch (err) {
    if (err instanceof ExecCredentialError) throw new KubeconfigError(err.message, names);
    throw err;
  }
}

function resolveContext(doc: KubeconfigYaml, name: string, origin: KubeconfigOrigin): KubeconfigContext {
  const names = (doc.contexts ?? []).map((c) => c.name);
  const ctx = doc.contexts?.find((c) => c.name === name)?.context;
  if (!ctx) throw new KubeconfigError(`${origin.source} has no context '${name}'`, names);
  const where = `context '${name}' of ${origin.source}`;
  const cluster = doc.clusters?.find((c) => c.name === ctx.cluster)?.cluster ?? {};
  const user = doc.users?.find((u) => u.name === ctx.user)?.user ?? {};
  const server = text(cluster.server);
  if (!server) throw new KubeconfigError(`${where}: its cluster '${String(ctx.cluster)}' has no server`, names);
  const caPem = dataOrFile(origin, where, cluster['certificate-authority-data'], cluster['certificate-authority'], 'certificate authority');
  const certPem = dataOrFile(origin, where, user['client-certificate-data'], user['client-certificate'], 'client certificate');
  const keyPem = dataOrFile(origin, where, user['client-key-data'], user['client-key'], 'client key');
  const token = text(user.token);
  const tokenFile = !token && text(user.tokenFile) ? path.resolve(origin.dir, text(user.tokenFile)!) : undefined;
  const exec = user.exec ? execOf(user.exec, origin, where, names) : undefined;
  const externalAuth = user['auth-provider'] ? 'auth provider' : undefined;
  const tlsServerName = text(cluster['tls-server-name']);
  return {
    context: name,
    ...(ctx.namespace ? { namespace: ctx.namespace } : {}),
    server,
    ...(caPem !== undefined ? { caPem } : {}),
    ...(tlsServerName ? { tlsServerName } : {}),
    ...(certPem !== undefined ? { certPem } : {}),
    ...(keyPem !== undefined ? { keyPem } : {}),
    ...(token ? { token } : {}),
    ...(tokenFile ? { tokenFile } : {}),
    ...(exec ? { exec } : {}),
    ...(externalAuth ? { externalAuth } : {}),
  };
}

/** One context of a kubeconfig text (default: its current context, else its first). */
export function kubeconfigContext(kubeconfigText: string, origin: KubeconfigOrigin, context?: string): KubeconfigContext {
  const doc = parseKubeconfigText(kubeconfigText, origin);
  const name = context ?? doc['current-context'] ?? doc.contexts?.[0]?.name;
  if (name === undefined) throw new KubeconfigError(`${origin.source} has no current context`);
  return resolveContext(doc, name, origin);
}

/** Every context of a kubeconfig text, in its order. */
export function kubeconfigContexts(kubeconfigText: string, origin: KubeconfigOrigin): KubeconfigContext[] {
  const doc = parseKubeconfigText(kubeconfigText, origin);
  return (doc.contexts ?? []).map((c) => resolveContext(doc, c.name, origin));
}

/** The origin of a kubeconfig file: named by its path, references relative to its folder. */
export function kubeconfigFileOrigin(file: string): KubeconfigOrigin {
  return { source: file, dir: path.dirname(path.resolve(file)) };
}

/** One context of a kubeconfig file (default: its current context, else its first). */
export async function readKubeconfig(file: string, context?: string): Promise<KubeconfigContext> {
  let content: string;
  try {
    content = await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new KubeconfigError(`${file}: cannot read it: ${(err as Error).message}`);
  }
  return kubeconfigContext(content, kubeconfigFileOrigin(file), context);
}
