/** Upstream managed-serviceaccount's names, kept so its tutorials work unchanged. */
export const MANAGED_SERVICEACCOUNT = 'managed-serviceaccount';
export const MSA_GROUP = 'authentication.open-cluster-management.io';
export const MSA_API = `${MSA_GROUP}/v1beta1`;
/** Spoke namespace of the agent and of every managed ServiceAccount (the seed tutorials bind roles there). */
export const MSA_NAMESPACE = 'open-cluster-management-managed-serviceaccount';
export const MSA_AGENT_DEPLOYMENT = 'managed-serviceaccount-addon-agent';
export const MSA_AGENT_SERVICE_ACCOUNT = 'managed-serviceaccount';
export const MANAGED_LABEL = `${MSA_GROUP}/is-managed-serviceaccount`;
export const DEFAULT_VALIDITY = '8640h0m0s';
/** The API server refuses TokenRequests for less than ten minutes. */
export const MIN_TOKEN_SECONDS = 600;
/** Refresh once this share of the token's real lifetime has passed. */
export const REFRESH_AT = 0.8;
/** How often a stored token is checked with a TokenReview. */
export const REVIEW_EVERY_MS = 30_000;

export const CONDITIONS = { secretCreated: 'SecretCreated', tokenReported: 'TokenReported' } as const;
