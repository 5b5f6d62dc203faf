import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { DEFAULT_HEADER_NAMES, distinctHeaders, identityFromHeaders, type CallerIdentity, type RequestHeaderNames } from './identity.js';

export const AUTH_CONFIGMAP_PATH = '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication';

/** What the hub API server publishes about its front proxy (kube-system/extension-apiserver-authentication). */
export interface FrontProxyConfig extends RequestHeaderNames {
  /** CA of the front-proxy client certificate the API server presents to aggregated servers. */
  caPem: string;
  /** Common names accepted on that certificate; empty means any name from the CA. */
  allowedNames: string[];
}

function jsonList(text: string | undefined): string[] {
  if (!text) return [];
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

/** Parses the ConfigMap's data; throws when it has no request-header CA (aggregation not configured). */
export function frontProxyConfigFrom(data: Record<string, string> | undefined): FrontProxyConfig {
  const caPem = data?.['requestheader-client-ca-file'];
  if (!caPem) {
    throw new Error(
      'ConfigMap kube-system/extension-apiserver-authentication has no requestheader-client-ca-file: ' +
        'the hub API server runs without --requestheader-client-ca-file, so it cannot delegate authentication to an aggregated API server',
    );
  }
  const names = (key: string, fallback: string[]) => {
    const list = jsonList(data?.[key]);
    return list.length ? list : fallback;
  };
  return {
    caPem,
    allowedNames: jsonList(data?.['requestheader-allowed-names']),
    usernameHeaders: names('requestheader-username-headers', DEFAULT_HEADER_NAMES.usernameHeaders),
    uidHeaders: jsonList(data?.['requestheader-uid-headers']),
    groupHeaders: names('requestheader-group-headers', DEFAULT_HEADER_NAMES.groupHeaders),
    extraHeaderPrefixes: names('requestheader-extra-headers-prefix', DEFAULT_HEADER_NAMES.extraHeaderPrefixes),
  };
}

export type Authentication = { ok: true; identity: CallerIdentity } | { ok: false; message: string };

/**
 * Delegated authentication: the TLS layer already verified any client certificate
 * against the front-proxy CA; here the certificate must be there, carry an allowed
 * name, and the request must name a user in the configured headers.
 */
export function authenticate(req: IncomingMessage, config: FrontProxyConfig): Authentication {
  const socket = req.socket as TLSSocket;
  if (!socket.authorized) {
    const peer = typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate() : undefined;
    const why =
      peer && Object.keys(peer).length
        ? `its client certificate is not from the front-proxy CA (${String(socket.authorizationError ?? 'unverified')})`
        : 'it has no client certificate';
    return {
      ok: false,
      message: `Unauthorized: this API is served through the hub API server's aggregation layer, and this request did not come from it (${why})`,
    };
  }
  const cn = socket.getPeerCertificate().subject?.CN;
  const cnText = Array.isArray(cn) ? cn.join(',') : (cn ?? '');
  if (config.allowedNames.length && !config.allowedNames.includes(cnText)) {
    return {
      ok: false,
      message: `Unauthorized: client certificate CN ${JSON.stringify(cnText)} is not one of the allowed front-proxy names (${config.allowedNames.join(', ')})`,
    };
  }
  const identity = identityFromHeaders(distinctHeaders(req as IncomingMessage & { headersDistinct?: Record<string, string[]> }), config);
  if (!identity) return { ok: false, message: `Unauthorized: the front proxy named no user (header ${config.usernameHeaders.join(' or ')} is missing)` };
  return { ok: true, identity };
}
