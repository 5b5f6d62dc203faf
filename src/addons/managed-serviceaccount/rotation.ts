import { parseGoDuration } from '../../util/duration.js';
import { DEFAULT_VALIDITY, MIN_TOKEN_SECONDS, REFRESH_AT } from './constants.js';
import type { ManagedServiceAccount } from './types.js';

/** spec.rotation.validity (a Go duration such as 8640h0m0s or 90m) in seconds; null when it is not one. */
function validitySeconds(text: string): number | null {
  const ms = parseGoDuration(text);
  return ms === null ? null : ms / 1000;
}

/** The token lifetime to ask for: the MSA's validity, at least what the API server accepts. */
export function requestedSeconds(msa: ManagedServiceAccount): { seconds: number; note?: string } {
  const text = msa.spec?.rotation?.validity ?? DEFAULT_VALIDITY;
  const parsed = validitySeconds(text);
  if (parsed === null)
    return { seconds: validitySeconds(DEFAULT_VALIDITY)!, note: `spec.rotation.validity ${JSON.stringify(text)} is not a duration; using ${DEFAULT_VALIDITY}` };
  if (parsed < MIN_TOKEN_SECONDS)
    return { seconds: MIN_TOKEN_SECONDS, note: `spec.rotation.validity ${text} is below the API server's minimum of 10m; tokens last 10m` };
  return { seconds: Math.floor(parsed) };
}

/**
 * When the stored token is due: at 80 % of its real lifetime (from the refresh
 * time to the expiry the API server granted, which may differ from what was asked).
 */
export function refreshDueAt(lastRefresh: Date, expiration: Date): Date {
  return new Date(lastRefresh.getTime() + REFRESH_AT * (expiration.getTime() - lastRefresh.getTime()));
}

export type RefreshReason = 'no token yet' | 'secret missing' | 'token due' | 'validity changed' | 'token rejected by TokenReview' | null;

/** Why the token must be requested again now, or null. Pure, so the rules are unit-tested. */
export function refreshReason(input: {
  msa: ManagedServiceAccount;
  secretHasToken: boolean;
  now: Date;
  tokenValid: boolean | undefined;
  requestedSecondsLast?: number;
}): RefreshReason {
  const ref = input.msa.status?.tokenSecretRef;
  const exp = input.msa.status?.expirationTimestamp;
  if (!ref || !exp) return 'no token yet';
  if (!input.secretHasToken) return 'secret missing';
  if (input.tokenValid === false) return 'token rejected by TokenReview';
  if (input.requestedSecondsLast !== undefined && input.requestedSecondsLast !== requestedSeconds(input.msa).seconds) return 'validity changed';
  if (input.msa.spec?.rotation?.enabled !== false && input.now >= refreshDueAt(new Date(ref.lastRefreshTimestamp), new Date(exp))) return 'token due';
  return null;
}
