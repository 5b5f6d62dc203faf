import { KubeClient, type KubeEndpoint } from './client.js';
import { ExecCredentialError } from './exec-credential.js';

/** Rejects with "no answer from <what> within N s" unless `promise` settles first. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from ${what} within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * GET /readyz with the endpoint's credentials: ok when it says `ok` within `timeoutMs`; what it said (or
 * the error) otherwise. A credential plugin that fails rejects: the cluster was never asked.
 */
export async function readyz(endpoint: KubeEndpoint, timeoutMs: number): Promise<{ ok: boolean; said: string }> {
  const client = new KubeClient(endpoint);
  try {
    const body = await withTimeout(client.getText('/readyz'), timeoutMs, endpoint.server);
    return { ok: body.trim() === 'ok', said: body.trim().slice(0, 300) };
  } catch (err) {
    if (err instanceof ExecCredentialError) throw err;
    return { ok: false, said: (err as Error).message };
  } finally {
    client.close();
  }
}
