import type { KubeClient } from '../kube/client.js';
import { isStatus } from '../kube/client.js';

/**
 * OCM's `ocm-tls-profile` ConfigMap (open-cluster-management.io/sdk-go pkg/tls): a
 * component reads it from its own namespace and serves TLS with that minimum version
 * and those cipher suites. Keys: `minTLSVersion` (VersionTLS10…VersionTLS13, or
 * TLSv1.0…TLSv1.3; empty or missing means VersionTLS12) and `cipherSuites` (comma
 * separated, IANA names as Go's crypto/tls spells them). As with Go, cipher suites
 * only choose among TLS 1.2 and older suites; a TLS 1.3 minimum ignores them.
 */
export const TLS_PROFILE_CONFIGMAP = 'ocm-tls-profile';
const TLS_PROFILE_KEYS = { minVersion: 'minTLSVersion', cipherSuites: 'cipherSuites' } as const;

type TlsVersionName = 'VersionTLS10' | 'VersionTLS11' | 'VersionTLS12' | 'VersionTLS13';

export interface TlsProfile {
  minVersion: TlsVersionName;
  /** IANA names, in the order given; empty: the runtime's defaults. */
  cipherSuites: string[];
}

export const DEFAULT_TLS_PROFILE: TlsProfile = { minVersion: 'VersionTLS12', cipherSuites: [] };

const VERSION_ALIASES: Record<string, TlsVersionName> = {
  VersionTLS10: 'VersionTLS10',
  'TLSv1.0': 'VersionTLS10',
  VersionTLS11: 'VersionTLS11',
  'TLSv1.1': 'VersionTLS11',
  VersionTLS12: 'VersionTLS12',
  'TLSv1.2': 'VersionTLS12',
  VersionTLS13: 'VersionTLS13',
  'TLSv1.3': 'VersionTLS13',
};

const NODE_VERSION: Record<TlsVersionName, 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3'> = {
  VersionTLS10: 'TLSv1',
  VersionTLS11: 'TLSv1.1',
  VersionTLS12: 'TLSv1.2',
  VersionTLS13: 'TLSv1.3',
};

/** The suites Go's crypto/tls knows for TLS ≤ 1.2, by IANA name, with OpenSSL's name (what Node takes). */
const TLS12_SUITES: Record<string, string> = {
  TLS_RSA_WITH_RC4_128_SHA: 'RC4-SHA',
  TLS_RSA_WITH_3DES_EDE_CBC_SHA: 'DES-CBC3-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA256: 'AES128-SHA256',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_RC4_128_SHA: 'ECDHE-ECDSA-RC4-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_RC4_128_SHA: 'ECDHE-RSA-RC4-SHA',
  TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA: 'ECDHE-RSA-DES-CBC3-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: 'ECDHE-ECDSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: 'ECDHE-RSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
};
/** TLS 1.3's suites are fixed (as in Go): accepted in a profile, without effect. */
const TLS13_SUITES = ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'];
const OPENSSL_TO_IANA = Object.fromEntries(Object.entries(TLS12_SUITES).map(([iana, openssl]) => [openssl, iana]));

export class TlsProfileError extends Error {}

/** A version name as the ConfigMap or `--tls-min-version` spells it; '' is the default. */
function parseTlsVersion(text: string): TlsVersionName {
  const t = text.trim();
  if (t === '') return DEFAULT_TLS_PROFILE.minVersion;
  const v = VERSION_ALIASES[t];
  if (!v) throw new TlsProfileError(`${JSON.stringify(t)} is not a TLS version; use one of VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13`);
  return v;
}

/** Comma-separated suite names (IANA, or OpenSSL's for TLS ≤ 1.2), as IANA names; unknown ones are an error naming them. */
export function parseCipherSuites(text: string): string[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !(n in TLS12_SUITES) && !TLS13_SUITES.includes(n) && !(n in OPENSSL_TO_IANA));
  if (unknown.length)
    throw new TlsProfileError(`unsupported cipher suites: ${unknown.join(', ')} (use IANA names such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)`);
  return names.map((n) => OPENSSL_TO_IANA[n] ?? n);
}

/** The profile a ConfigMap's data describes; errors name the key. */
export function tlsProfileFromData(data: Record<string, string> | undefined): TlsProfile {
  const d = data ?? {};
  const field = <T>(key: string, parse: (s: string) => T): T => {
    try {
      return parse(d[key] ?? '');
    } catch (err) {
      throw new TlsProfileError(`ConfigMap ${TLS_PROFILE_CONFIGMAP} key ${key}: ${(err as Error).message}`);
    }
  };
  return { minVersion: field(TLS_PROFILE_KEYS.minVersion, parseTlsVersion), cipherSuites: field(TLS_PROFILE_KEYS.cipherSuites, parseCipherSuites) };
}

/** The profile from flags named as apiserver-network-proxy's server names them (`--tls-min-version`, `--cipher-suites`). */
export function tlsProfileFromFlags(minVersion: string | undefined, cipherSuites: string | undefined): TlsProfile {
  const flag = <T>(name: string, text: string | undefined, parse: (s: string) => T): T => {
    try {
      return parse(text ?? '');
    } catch (err) {
      throw new TlsProfileError(`--${name}: ${(err as Error).message}`);
    }
  };
  return { minVersion: flag('tls-min-version', minVersion, parseTlsVersion), cipherSuites: flag('cipher-suites', cipherSuites, parseCipherSuites) };
}

/** The same profile as flags for a server that takes them (empty cipher list: no flag, the defaults). */
export function tlsProfileArgs(profile: TlsProfile): string[] {
  return [`--tls-min-version=${profile.minVersion}`, ...(profile.cipherSuites.length ? [`--cipher-suites=${profile.cipherSuites.join(',')}`] : [])];
}

export interface NodeTlsOptions {
  minVersion: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';
  maxVersion?: 'TLSv1.3';
  /** OpenSSL cipher list; absent: Node's defaults. */
  ciphers?: string;
}

/**
 * The options to spread into `tls.createServer`, `https.createServer`,
 * `http2.createSecureServer` or a secure context. TLS 1.3 suites stay Node's defaults
 * (the list below adds them back, since Node's `ciphers` string governs both).
 */
export function nodeTlsOptions(profile: TlsProfile): NodeTlsOptions {
  const minVersion = NODE_VERSION[profile.minVersion];
  if (profile.minVersion === 'VersionTLS13') return { minVersion, maxVersion: 'TLSv1.3' };
  const tls12 = profile.cipherSuites.filter((n) => n in TLS12_SUITES).map((n) => TLS12_SUITES[n]!);
  if (!tls12.length) return { minVersion };
  // Versions below 1.2 need OpenSSL's security level 0 for their SHA-1 suites.
  const level = profile.minVersion === 'VersionTLS12' ? '' : ':@SECLEVEL=0';
  return { minVersion, ciphers: [...TLS13_SUITES, ...tls12].join(':') + level };
}

/**
 * The profile in `namespace` (the reading component's own), or the default
 * (TLS 1.2, default suites) when there is no such ConfigMap. A malformed
 * ConfigMap is an error: serving weaker than the operator asked is worse than not
 * rolling out.
 */
export async function readTlsProfile(client: KubeClient, namespace: string): Promise<TlsProfile & { found: boolean }> {
  try {
    const cm = await client.get<{ data?: Record<string, string> }>(`/api/v1/namespaces/${namespace}/configmaps/${TLS_PROFILE_CONFIGMAP}`);
    return { ...tlsProfileFromData(cm.data), found: true };
  } catch (err) {
    if (isStatus(err, 404)) return { ...DEFAULT_TLS_PROFILE, found: false };
    throw err;
  }
}
