import fs from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import { InvalidInputError } from '../../errors.js';
import type { KubeEndpoint } from '../../kube/client.js';
import type { KubeconfigEntry } from '../../kube/kubeconfig.js';
import { RESERVED_CLUSTER_NAMES, RESERVED_CLUSTER_PREFIX } from '../../config/index.js';

/** One cluster the user brings: a context of their kubeconfig and the name the lab gives it. */
export interface ExistingClusterSpec {
  context: string;
  name: string;
  hub: boolean;
}

/** What `up --runtime existing` is given: the user's kubeconfig and which of its contexts are the hub and the spokes. */
export interface ExistingClustersInput {
  kubeconfig: string;
  hubContext: string;
  spokeContexts: string[];
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Why `name` cannot name a lab cluster (it becomes a context, and for a spoke the namespace of its ManagedCluster on the hub), or null. */
export function clusterNameProblem(name: string): string | null {
  if (!DNS_LABEL.test(name)) return 'is not a DNS label (lower-case letters, digits and -, at most 63, starting and ending with a letter or digit)';
  if ((RESERVED_CLUSTER_NAMES as readonly string[]).includes(name) || name.startsWith(RESERVED_CLUSTER_PREFIX))
    return 'is a namespace every cluster or OCM already has';
  return null;
}

/**
 * `CTX` or `CTX=NAME`: the cluster is named after its context when the
 * context's name is a valid cluster name, else NAME must be given (the last
 * `=` splits, so contexts with `=` in them still work with a NAME).
 */
export function parseClusterSpec(spec: string, hub: boolean): ExistingClusterSpec {
  const flag = hub ? '--hub-context' : '--spoke-context';
  const eq = spec.lastIndexOf('=');
  const [context, name] = eq > 0 ? [spec.slice(0, eq), spec.slice(eq + 1)] : [spec, spec];
  if (!context) throw new InvalidInputError(`${flag} is empty`, { hint: `${flag} CONTEXT or ${flag} CONTEXT=NAME` });
  const problem = clusterNameProblem(name);
  if (problem) {
    throw new InvalidInputError(`${flag} ${spec}: cluster name '${name}' ${problem}`, {
      hint: eq > 0 ? 'choose another NAME' : `name the cluster: ${flag} '${context}=NAME' (e.g. ${hub ? 'hub' : 'cluster1'})`,
    });
  }
  return { context, name, hub };
}

/** The hub and the spokes, checked: names and contexts unique, at least one spoke. */
export function clusterSpecs(input: ExistingClustersInput): ExistingClusterSpec[] {
  if (!input.spokeContexts.length)
    throw new InvalidInputError('--runtime existing needs at least one --spoke-context', {
      hint: 'ocm-lab up --runtime existing --kubeconfig FILE --hub-context CTX --spoke-context CTX',
    });
  const specs = [parseClusterSpec(input.hubContext, true), ...input.spokeContexts.map((s) => parseClusterSpec(s, false))];
  for (const key of ['context', 'name'] as const) {
    const seen = new Set<string>();
    for (const s of specs) {
      if (seen.has(s[key]))
        throw new InvalidInputError(
          `${key === 'context' ? 'context' : 'cluster name'} '${s[key]}' is given twice: every cluster of the lab is a different context with a different name`,
        );
      seen.add(s[key]);
    }
  }
  return specs;
}

interface KubeconfigFile {
  contexts?: { name: string; context?: { cluster?: string; user?: string } }[];
  clusters?: { name: string; cluster?: Record<string, unknown> }[];
  users?: { name: string; user?: Record<string, unknown> }[];
}

/** A context of the user's kubeconfig resolved to what the lab needs: server, CA and credentials (file references read now). */
export interface ResolvedContext {
  endpoint: KubeEndpoint;
  entry: Omit<KubeconfigEntry, 'name'>;
}

async function readRef(base: string, data: unknown, file: unknown, what: string, where: string): Promise<string | undefined> {
  if (typeof data === 'string' && data) return Buffer.from(data, 'base64').toString('utf8');
  if (typeof file === 'string' && file) {
    const p = path.resolve(base, file);
    return fs.readFile(p, 'utf8').catch((err: Error) => {
      throw new InvalidInputError(`${where}: cannot read its ${what} ${p}: ${err.message}`);
    });
  }
  return undefined;
}

/**
 * Reads one context of a kubeconfig file. Client certificates and tokens
 * (inline or in files) are supported; exec plugins and auth providers are
 * not, because the lab's pods and the nodes of other runtimes cannot run them.
 */
export async function resolveContext(kubeconfigFile: string, context: string): Promise<ResolvedContext> {
  const text = await fs.readFile(kubeconfigFile, 'utf8').catch((err: Error) => {
    throw new InvalidInputError(`--kubeconfig ${kubeconfigFile}: cannot read it: ${err.message}`);
  });
  let doc: KubeconfigFile;
  try {
    doc = (YAML.parse(text) as KubeconfigFile | null) ?? {};
  } catch (err) {
    throw new InvalidInputError(`--kubeconfig ${kubeconfigFile}: not YAML: ${(err as Error).message}`);
  }
  const where = `context '${context}' of ${kubeconfigFile}`;
  const ctx = doc.contexts?.find((c) => c.name === context)?.context;
  if (!ctx)
    throw new InvalidInputError(`${kubeconfigFile} has no context '${context}'`, {
      hint: `its contexts: ${(doc.contexts ?? []).map((c) => c.name).join(', ') || 'none'}`,
    });
  const cluster = doc.clusters?.find((c) => c.name === ctx.cluster)?.cluster ?? {};
  const user = doc.users?.find((u) => u.name === ctx.user)?.user ?? {};
  const server = cluster.server;
  if (typeof server !== 'string' || !server.startsWith('https://'))
    throw new InvalidInputError(`${where}: its cluster has no https server URL (server: ${String(server)})`);
  if (user.exec || user['auth-provider']) {
    throw new InvalidInputError(`${where}: authenticates through an ${user.exec ? 'exec plugin' : 'auth provider'}, which ocm-lab does not run`, {
      hint: 'give a context with a client certificate or a ServiceAccount token (e.g. kubectl create token … for an admin ServiceAccount)',
    });
  }
  const base = path.dirname(path.resolve(kubeconfigFile));
  const caPem = await readRef(base, cluster['certificate-authority-data'], cluster['certificate-authority'], 'certificate authority', where);
  if (!caPem)
    throw new InvalidInputError(`${where}: its cluster names no certificate authority`, {
      hint: 'ocm-lab gives the spokes the hub CA and verifies every cluster: set certificate-authority-data',
    });
  const certPem = await readRef(base, user['client-certificate-data'], user['client-certificate'], 'client certificate', where);
  const keyPem = await readRef(base, user['client-key-data'], user['client-key'], 'client key', where);
  const token =
    typeof user.token === 'string' && user.token ? user.token : await readRef(base, undefined, user.tokenFile, 'token file', where).then((t) => t?.trim());
  if (!(certPem && keyPem) && !token) throw new InvalidInputError(`${where}: its user has neither a client certificate and key nor a token`);
  const tlsServerName = typeof cluster['tls-server-name'] === 'string' ? cluster['tls-server-name'] : undefined;
  return {
    endpoint: { server, caPem, ...(certPem && keyPem ? { certPem, keyPem } : {}), ...(token ? { token } : {}) },
    entry: {
      server,
      caPem,
      ...(certPem && keyPem ? { clientCertPem: certPem, clientKeyPem: keyPem } : {}),
      ...(token ? { token } : {}),
      ...(tlsServerName ? { tlsServerName } : {}),
    },
  };
}
