import https from 'node:https';
import {
  ApiException,
  CertificatesV1Api,
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { FIELD_MANAGER } from './constants.js';
import { waitUntil as waitFor, type WaitOptions } from '../kube/wait.js';

export type { WaitOptions };

/** The API clients one cluster needs, built from one kubeconfig file. */
export interface KubeClients {
  kubeconfig: string;
  config: KubeConfig;
  server: string;
  objects: KubernetesObjectApi;
  core: CoreV1Api;
  certificates: CertificatesV1Api;
}

export function kubeClients(kubeconfigFile: string): KubeClients {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigFile);
  return {
    kubeconfig: kubeconfigFile,
    config: kc,
    server: kc.getCurrentCluster()?.server ?? '',
    objects: KubernetesObjectApi.makeApiClient(kc),
    core: kc.makeApiClient(CoreV1Api),
    certificates: kc.makeApiClient(CertificatesV1Api),
  };
}

/**
 * One request with the kubeconfig's credentials and the body sent exactly as
 * given. The typed client re-serialises known kinds through its own models and
 * silently drops fields it spells differently (a CRD schema's
 * `x-kubernetes-int-or-string`, for one), so CRDs go through here.
 */
export async function rawRequest(clients: KubeClients, method: string, urlPath: string, body?: unknown, contentType = 'application/json'): Promise<unknown> {
  const url = new URL(urlPath, clients.server);
  const options: https.RequestOptions = { method, headers: { accept: 'application/json' } };
  await clients.config.applyToHTTPSOptions(options);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = https.request(url, { ...options, headers: { ...options.headers, ...(payload ? { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) } : {}) }, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) {
          resolve(text ? (JSON.parse(text) as unknown) : null);
        } else {
          reject(new ApiException(status, `${method} ${url.pathname} failed`, text, {}));
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url.pathname}: no answer within 30 s`)));
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

export function httpStatusOf(err: unknown): number | null {
  if (err instanceof ApiException) return err.code;
  const code = (err as { code?: unknown; statusCode?: unknown } | null)?.code ?? (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === 'number' ? code : null;
}

export const isNotFound = (err: unknown): boolean => httpStatusOf(err) === 404;
export const isConflict = (err: unknown): boolean => httpStatusOf(err) === 409;

/** The API server's own words for a failed call (its Status message), not the client's stack. */
export function apiMessage(err: unknown): string {
  if (err instanceof ApiException) {
    const body = err.body as unknown;
    let parsed: { message?: string } | null = null;
    if (typeof body === 'string') {
      try {
        parsed = JSON.parse(body) as { message?: string };
      } catch {
        parsed = { message: body };
      }
    } else if (body && typeof body === 'object') parsed = body as { message?: string };
    return `HTTP ${err.code}: ${parsed?.message ?? 'no message'}`;
  }
  return err instanceof Error ? err.message : String(err);
}

export async function readOrNull<T extends KubernetesObject>(clients: KubeClients, header: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } }): Promise<T | null> {
  try {
    return (await clients.objects.read(header as never)) as T;
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

/** Server-side apply: creates or converges the fields ocm-lab owns, leaves others' fields alone. */
export async function apply<T extends KubernetesObject>(clients: KubeClients, object: T): Promise<T> {
  return (await clients.objects.patch(object, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply)) as T;
}

/** Creates the object only when it is missing; an existing one is left exactly as it is. */
export async function ensureExists<T extends KubernetesObject>(clients: KubeClients, object: T): Promise<'created' | 'kept'> {
  const meta = object.metadata ?? {};
  const existing = await readOrNull(clients, { apiVersion: object.apiVersion ?? '', kind: object.kind ?? '', metadata: { name: meta.name ?? '', ...(meta.namespace ? { namespace: meta.namespace } : {}) } });
  if (existing) return 'kept';
  try {
    await clients.objects.create(object, undefined, undefined, FIELD_MANAGER);
    return 'created';
  } catch (err) {
    if (isConflict(err)) return 'kept';
    throw err;
  }
}

/** Polls until a value comes, API errors in the API server's words (see src/kube/wait.ts). */
export function waitUntil<T>(check: () => Promise<T | undefined>, options: WaitOptions): Promise<T> {
  return waitFor(check, { describeError: apiMessage, ...options });
}
