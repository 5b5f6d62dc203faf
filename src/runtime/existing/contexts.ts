import fs from 'node:fs/promises';
import { InvalidInputError } from '../../errors.js';
import type { KubeEndpoint } from '../../kube/client.js';
import { ExecCredentials } from '../../kube/exec-credential.js';
import { KubeconfigError, readKubeconfig, type KubeconfigContext, type KubeconfigEntry } from '../../kube/kubeconfig.js';
import { RESERVED_CLUSTER_NAMES, RESERVED_CLUSTER_PREFIX } from '../../config/types.js';

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
  /** `--image-registry`: where `up` pushes our image and the lab's pods pull it from (image-registry.ts). */
  imageRegistry?: string;
  /** `--hub-server`: the hub's API server as the spokes reach it (hub-server.ts). */
  hubServer?: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Why `name` cannot name a lab cluster (it becomes a context, and for a spoke the namespace of its ManagedCluster on the hub), or null. */
function clusterNameProblem(name: string): string | null {
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

/** A context of the user's kubeconfig resolved to what the lab needs: server, CA and credentials (file references read now). */
export interface ResolvedContext {
  endpoint: KubeEndpoint;
  entry: Omit<KubeconfigEntry, 'name'>;
}

/**
 * Reads one context of a kubeconfig file. Client certificates, tokens (inline
 * or in files) and credential plugins (`exec`, as EKS, GKE and AKS contexts
 * have) are supported; auth providers (removed from kubectl) are not.
 */
export async function resolveContext(kubeconfigFile: string, context: string): Promise<ResolvedContext> {
  let ctx: KubeconfigContext;
  try {
    ctx = await readKubeconfig(kubeconfigFile, context);
  } catch (err) {
    if (!(err instanceof KubeconfigError)) throw err;
    const message = err.message.startsWith(`${kubeconfigFile}:`) ? `--kubeconfig ${err.message}` : err.message;
    const noContext = err.message.endsWith(`has no context '${context}'`);
    throw new InvalidInputError(message, noContext ? { hint: `its contexts: ${err.contexts.join(', ') || 'none'}` } : {});
  }
  const where = `context '${context}' of ${kubeconfigFile}`;
  const { server, caPem, certPem, keyPem, tlsServerName } = ctx;
  if (!server.startsWith('https://')) throw new InvalidInputError(`${where}: its cluster has no https server URL (server: ${server})`);
  if (ctx.externalAuth) {
    throw new InvalidInputError(`${where}: authenticates through an ${ctx.externalAuth}, which ocm-lab does not run`, {
      hint: 'give a context with a client certificate, a token or a credential plugin (users[].user.exec), as kubectl has since auth providers were removed',
    });
  }
  if (!caPem)
    throw new InvalidInputError(`${where}: its cluster names no certificate authority`, {
      hint: 'ocm-lab gives the spokes the hub CA and verifies every cluster: set certificate-authority-data',
    });
  const token = ctx.token ?? (ctx.tokenFile ? await readTokenFile(ctx.tokenFile, where) : undefined);
  const { exec } = ctx;
  if (!(certPem && keyPem) && !token && !exec) {
    throw new InvalidInputError(`${where}: its user has neither a client certificate and key, nor a token, nor a credential plugin`);
  }
  // A plugin's token expires: the lab keeps the plugin and runs it when it needs a token, as kubectl does.
  const credentials = exec ? new ExecCredentials(exec, { context, server, caPem }) : undefined;
  return {
    endpoint: { server, caPem, ...(certPem && keyPem ? { certPem, keyPem } : {}), ...(credentials ? { credentials } : token ? { token } : {}) },
    entry: {
      server,
      caPem,
      ...(certPem && keyPem ? { clientCertPem: certPem, clientKeyPem: keyPem } : {}),
      ...(exec ? { exec } : token ? { token } : {}),
      ...(tlsServerName ? { tlsServerName } : {}),
    },
  };
}

/** The lab copies the token into the kubeconfigs it writes, so a token file is read now. */
async function readTokenFile(file: string, where: string): Promise<string> {
  const content = await fs.readFile(file, 'utf8').catch((err: Error) => {
    throw new InvalidInputError(`${where}: cannot read its token file ${file}: ${err.message}`);
  });
  return content.trim();
}
