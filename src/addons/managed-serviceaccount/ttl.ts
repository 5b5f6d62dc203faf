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

/**
 * Deletes each ManagedServiceAccount with a TTL at its deadline, on a timer of its
 * own (as upstream's controller requeues for the remaining time) rather than on the
 * next reconcile pass, which would be up to a pass interval late. `observe` is called
 * with every version seen (list, watch, pass); a changed TTL moves the timer.
 */
export class TtlDeletions {
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();

  constructor(
    private readonly remove: (msa: ManagedServiceAccount) => Promise<void>,
    private readonly log: (line: string) => void = () => undefined,
    private readonly now: () => number = Date.now,
  ) {}

  private static key(msa: ManagedServiceAccount): string {
    return msa.metadata.uid || `${msa.metadata.namespace}/${msa.metadata.name}`;
  }

  observe(msa: ManagedServiceAccount): void {
    const key = TtlDeletions.key(msa);
    const deadline = ttlDeadline(msa);
    if (!deadline || msa.metadata.deletionTimestamp) {
      this.forget(msa);
      return;
    }
    const at = deadline.getTime();
    const current = this.timers.get(key);
    if (current?.at === at) return;
    if (current) clearTimeout(current.timer);
    const timer = setTimeout(
      () => {
        this.timers.delete(key);
        this.remove(msa).catch((err: unknown) =>
          this.log(`cannot delete ManagedServiceAccount ${msa.metadata.namespace}/${msa.metadata.name} at its TTL: ${(err as Error).message}`),
        );
      },
      Math.max(0, at - this.now()),
    );
    // The timers never keep a stopping process alive.
    timer.unref();
    this.timers.set(key, { at, timer });
  }

  forget(msa: ManagedServiceAccount): void {
    const key = TtlDeletions.key(msa);
    const current = this.timers.get(key);
    if (current) clearTimeout(current.timer);
    this.timers.delete(key);
  }

  /** Deadlines scheduled, by key (for tests and logs). */
  scheduled(): Map<string, Date> {
    return new Map([...this.timers].map(([k, v]) => [k, new Date(v.at)]));
  }

  stop(): void {
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
