import { isStatus, type KubeClient } from '../../kube/client.js';
import {
  collectionPath,
  type Condition,
  deleteIfPresent,
  fromBase64,
  getOrNull,
  type KubeObject,
  objectPath,
  setCondition,
  toBase64,
} from '../../kube/objects.js';
import { CONDITIONS, MANAGED_LABEL, MSA_API, MSA_NAMESPACE, REVIEW_EVERY_MS } from './constants.js';
import { refreshReason, requestedSeconds } from './rotation.js';
import type { ManagedServiceAccount } from './types.js';
import { serviceAccount } from '../../kube/builders.js';

interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

const REQUESTED_SECONDS_ANNOTATION = 'ocm-lab.io/token-request-seconds';
const rfc3339 = (d: Date) => d.toISOString().replace(/\.\d+Z$/, 'Z');

export interface MsaAgentOptions {
  cluster: string;
  hub: KubeClient;
  spoke: KubeClient;
  /** The spoke API server's CA certificate, written into every token Secret as ca.crt. */
  spokeCaPem: string;
  /** Where the agent keeps the managed ServiceAccounts: its own namespace (the addon's install namespace). */
  namespace?: string;
  log?: (line: string) => void;
  now?: () => Date;
}

/**
 * The managed-serviceaccount agent of one cluster: for each ManagedServiceAccount in
 * the cluster's namespace on the hub, a ServiceAccount of that name here, a token
 * from the TokenRequest API, and the hub Secret `<cluster>/<name>` (Opaque, ca.crt +
 * token, owned by the MSA) with the status that reports it. Tokens are refreshed at
 * 80 % of their real lifetime, or at once when a TokenReview rejects the stored one;
 * a deleted Secret is written again; ServiceAccounts of deleted MSAs are removed.
 */
export class MsaAgent {
  private readonly lastReview = new Map<string, number>();
  private readonly log: (line: string) => void;
  private readonly now: () => Date;
  private readonly namespace: string;

  constructor(private readonly o: MsaAgentOptions) {
    this.log = o.log ?? (() => undefined);
    this.now = o.now ?? (() => new Date());
    this.namespace = o.namespace || MSA_NAMESPACE;
  }

  async reconcileOnce(): Promise<string[]> {
    const done: string[] = [];
    const msas = (await this.o.hub.get<{ items: ManagedServiceAccount[] }>(collectionPath(MSA_API, 'ManagedServiceAccount', this.o.cluster))).items.map(
      (m) => ({ ...m, apiVersion: MSA_API, kind: 'ManagedServiceAccount' }),
    );
    const wanted = new Set<string>();
    for (const msa of msas) {
      if (msa.metadata.deletionTimestamp) continue;
      wanted.add(msa.metadata.name);
      try {
        const what = await this.reconcileOne(msa);
        if (what) done.push(`${msa.metadata.name}: ${what}`);
      } catch (err) {
        this.log(`${this.o.cluster}/${msa.metadata.name}: ${(err as Error).message}`);
        await this.report(msa, { type: CONDITIONS.tokenReported, status: 'False', reason: 'TokenReportFailed', message: (err as Error).message }).catch(
          () => undefined,
        );
      }
    }
    const accounts = (
      await this.o.spoke.get<{ items: KubeObject[] }>(collectionPath('v1', 'ServiceAccount', this.namespace), { labelSelector: `${MANAGED_LABEL}=true` })
    ).items;
    for (const sa of accounts) {
      if (wanted.has(sa.metadata.name)) continue;
      if (await deleteIfPresent(this.o.spoke, objectPath({ ...sa, apiVersion: 'v1', kind: 'ServiceAccount' })))
        done.push(`${sa.metadata.name}: ServiceAccount removed (its ManagedServiceAccount is gone)`);
      this.lastReview.delete(sa.metadata.name);
    }
    return done;
  }

  private async reconcileOne(msa: ManagedServiceAccount): Promise<string | null> {
    const name = msa.metadata.name;
    const created = await this.ensureServiceAccount(name);
    const secretPath = objectPath({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: this.o.cluster } });
    const secret = await getOrNull<Secret>(this.o.hub, secretPath);
    const token = fromBase64(secret?.data?.token);
    const lastAnnotation = secret?.metadata.annotations?.[REQUESTED_SECONDS_ANNOTATION];
    const reason = refreshReason({
      msa,
      secretHasToken: !!token,
      now: this.now(),
      tokenValid: token && !created ? await this.reviewIfDue(name, token) : undefined,
      requestedSecondsLast: lastAnnotation ? Number(lastAnnotation) : undefined,
    });
    if (!reason && !created) return null;
    const { seconds, note } = requestedSeconds(msa);
    const issued = await this.requestToken(name, seconds);
    await this.writeSecret(msa, secret, issued.token, seconds);
    this.lastReview.set(name, Date.now());
    const refreshed = this.now();
    const fresh = await this.o.hub.get<ManagedServiceAccount>(objectPath(msa));
    const conditions: Condition[] = [...(fresh.status?.conditions ?? [])];
    setCondition(conditions, {
      type: CONDITIONS.secretCreated,
      status: 'True',
      reason: 'SecretCreated',
      message: `Secret ${this.o.cluster}/${name} holds the token`,
    });
    setCondition(conditions, {
      type: CONDITIONS.tokenReported,
      status: 'True',
      reason: 'TokenReported',
      message: note ?? `token of ServiceAccount ${this.namespace}/${name} reported`,
    });
    await this.o.hub.put(`${objectPath(msa)}/status`, {
      ...fresh,
      status: {
        ...fresh.status,
        conditions,
        expirationTimestamp: rfc3339(issued.expiration),
        tokenSecretRef: { name, lastRefreshTimestamp: rfc3339(refreshed) },
      },
    });
    return (
      `token ${created ? 'issued for a new ServiceAccount' : `refreshed (${reason ?? 'ServiceAccount recreated'})`}, ` + `expires ${rfc3339(issued.expiration)}`
    );
  }

  /** True when the ServiceAccount had to be created (any older token belongs to a previous one). */
  private async ensureServiceAccount(name: string): Promise<boolean> {
    try {
      await this.o.spoke.post(
        collectionPath('v1', 'ServiceAccount', this.namespace),
        serviceAccount({ name, namespace: this.namespace, labels: { [MANAGED_LABEL]: 'true' } }),
      );
      return true;
    } catch (err) {
      if (isStatus(err, 409)) return false;
      throw err;
    }
  }

  private async reviewIfDue(name: string, token: string): Promise<boolean | undefined> {
    const last = this.lastReview.get(name) ?? 0;
    if (Date.now() - last < REVIEW_EVERY_MS) return undefined;
    this.lastReview.set(name, Date.now());
    const review = await this.o.spoke.post<{ status?: { authenticated?: boolean } }>('/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token },
    });
    return review.status?.authenticated === true;
  }

  private async requestToken(name: string, seconds: number): Promise<{ token: string; expiration: Date }> {
    const res = await this.o.spoke.post<{ status: { token: string; expirationTimestamp: string } }>(
      `/api/v1/namespaces/${this.namespace}/serviceaccounts/${name}/token`,
      {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: seconds },
      },
    );
    return { token: res.status.token, expiration: new Date(res.status.expirationTimestamp) };
  }

  private async writeSecret(msa: ManagedServiceAccount, existing: Secret | null, token: string, seconds: number): Promise<void> {
    const body: Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        ...(existing?.metadata ?? {}),
        name: msa.metadata.name,
        namespace: this.o.cluster,
        labels: { ...existing?.metadata.labels, [MANAGED_LABEL]: 'true' },
        annotations: { ...existing?.metadata.annotations, [REQUESTED_SECONDS_ANNOTATION]: String(seconds) },
        ownerReferences: [{ apiVersion: MSA_API, kind: 'ManagedServiceAccount', name: msa.metadata.name, uid: msa.metadata.uid ?? '' }],
      },
      type: 'Opaque',
      data: { 'ca.crt': toBase64(this.o.spokeCaPem), token: toBase64(token) },
    };
    if (existing) await this.o.hub.put(objectPath(body), body);
    else await this.o.hub.post(collectionPath('v1', 'Secret', this.o.cluster), body);
  }

  private async report(msa: ManagedServiceAccount, condition: Condition): Promise<void> {
    const fresh = await this.o.hub.get<ManagedServiceAccount>(objectPath(msa));
    const conditions = [...(fresh.status?.conditions ?? [])];
    if (setCondition(conditions, condition)) await this.o.hub.put(`${objectPath(msa)}/status`, { ...fresh, status: { ...fresh.status, conditions } });
  }
}
