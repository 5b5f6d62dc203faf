import YAML from 'yaml';
import { writeFileAtomic } from '../util/atomic-file.js';

/** One context of a kubeconfig: a cluster endpoint and a client certificate or token. */
export interface KubeconfigEntry {
  /** Used as the cluster, user and context name. */
  name: string;
  server: string;
  caPem: string;
  clientCertPem?: string;
  clientKeyPem?: string;
  token?: string;
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

export function buildKubeconfig(entries: readonly KubeconfigEntry[], currentContext = entries[0]?.name ?? ''): KubeconfigDoc {
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
