/**
 * Waits for every task, started side by side, and returns their values; when some fail, throws the
 * failure of the first in argument order, as a sequence of awaits would have (so the error a
 * person reads, and its exit code, stays the one that explains the most: "no such cluster" before
 * "no such ServiceAccount of that cluster"). Every task is settled first: none rejects unobserved.
 */
export async function allInOrder<T extends readonly unknown[]>(tasks: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const results = await Promise.allSettled(tasks);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}
