import type { ManagedServiceAccount } from './types.js';

/**
 * When an MSA with `spec.ttlSecondsAfterCreation` is due for deletion (creation time
 * plus the TTL), or null without a TTL.
 */
export function ttlDeadline(msa: ManagedServiceAccount): Date | null {
  const ttl = msa.spec?.ttlSecondsAfterCreation;
  const created = msa.metadata.creationTimestamp;
  if (ttl === undefined || ttl === null || !created) return null;
  return new Date(new Date(created).getTime() + ttl * 1000);
}

export function ttlExpired(msa: ManagedServiceAccount, now = new Date()): boolean {
  const deadline = ttlDeadline(msa);
  return deadline !== null && !msa.metadata.deletionTimestamp && now >= deadline;
}
