import type { Options } from 'yargs';
import { InvalidInputError } from '../../../errors.js';
import { tlsProfileFromFlags } from '../../../tunnel/index.js';
import type { TlsProfile } from '../../../tunnel/tls-profile.js';

/**
 * `--tls-min-version` and `--cipher-suites`, as apiserver-network-proxy's server and
 * cluster-proxy's servers name them: the internal commands that serve TLS take both,
 * and the lab passes them from the `ocm-tls-profile` ConfigMap (`tlsProfileArgs`).
 */
export const TLS_PROFILE_OPTIONS = {
  'tls-min-version': { type: 'string', describe: 'minimum TLS version of every TLS listener: VersionTLS10..VersionTLS13 (default VersionTLS12)' },
  'cipher-suites': { type: 'string', describe: "comma-separated IANA cipher suite names for TLS 1.2 and older (default: the runtime's)" },
} as const satisfies Record<string, Options>;

export interface TlsProfileArgs {
  'tls-min-version'?: string;
  'cipher-suites'?: string;
}

/** The profile the two flags give; a bad value is bad input naming its flag. */
export function tlsProfileOfArgs(a: TlsProfileArgs): TlsProfile {
  try {
    return tlsProfileFromFlags(a['tls-min-version'], a['cipher-suites']);
  } catch (err) {
    throw new InvalidInputError((err as Error).message);
  }
}
