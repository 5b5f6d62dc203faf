/**
 * What the gateway's TLS listener serves with, reloaded while it runs: the front proxy's
 * CA and header names (kube-system/extension-apiserver-authentication) and OCM's TLS profile.
 */
import type https from 'node:https';
import type { KubeClient } from '../../kube/client.js';
import { DEFAULT_TLS_PROFILE, nodeTlsOptions, TLS_PROFILE_CONFIGMAP, tlsProfileFromData, type TlsProfile } from '../../tunnel/tls-profile.js';
import { ADDON_MANAGER_NAMESPACE } from '../framework/names.js';
import { AUTH_CONFIGMAP_PATH, frontProxyConfigFrom, type FrontProxyConfig } from './delegated-auth.js';
import { Informer } from '../../kube/informer.js';

type ConfigMapLike = { metadata: { name: string; resourceVersion?: string }; data?: Record<string, string> };

/** The two ConfigMaps the listener follows, each watched alone by a field selector. */
export function servingConfigInformers(
  hub: KubeClient,
  log: (line: string) => void,
): { authConfigMaps: Informer<ConfigMapLike>; tlsProfiles: Informer<ConfigMapLike> } {
  const authConfigMaps = new Informer<ConfigMapLike>(hub, '/api/v1/namespaces/kube-system/configmaps', log, {
    fieldSelector: 'metadata.name=extension-apiserver-authentication',
  });
  // OCM's ocm-tls-profile, where our other addons' servers read it (the addon managers' namespace).
  const tlsProfiles = new Informer<ConfigMapLike>(hub, `/api/v1/namespaces/${ADDON_MANAGER_NAMESPACE}/configmaps`, log, {
    fieldSelector: `metadata.name=${TLS_PROFILE_CONFIGMAP}`,
  });
  return { authConfigMaps, tlsProfiles };
}

/** The listener's certificate, client CA and TLS options; built from the synced informers. */
export class ServingTls {
  private frontProxy: FrontProxyConfig;
  private tlsProfile: TlsProfile;

  constructor(
    private readonly tls: { certPem: string; keyPem: string },
    private readonly authConfigMaps: Informer<ConfigMapLike>,
    private readonly tlsProfiles: Informer<ConfigMapLike>,
    private readonly log: (line: string) => void,
  ) {
    this.frontProxy = frontProxyConfigFrom(authConfigMaps.get('extension-apiserver-authentication')?.data);
    const initial = tlsProfiles.get(TLS_PROFILE_CONFIGMAP);
    // Serving weaker than the operator asked is worse than not serving: a malformed profile at start is fatal.
    this.tlsProfile = initial ? tlsProfileFromData(initial.data) : DEFAULT_TLS_PROFILE;
  }

  /** The front proxy's configuration as last loaded. */
  get frontProxyConfig(): FrontProxyConfig {
    return this.frontProxy;
  }

  secureContext(): https.ServerOptions {
    return { cert: this.tls.certPem, key: this.tls.keyPem, ca: this.frontProxy.caPem, ...nodeTlsOptions(this.tlsProfile) };
  }

  /** From now on, a changed front-proxy CA or TLS profile replaces the secure context of `server`. */
  reloadInto(server: https.Server): void {
    this.authConfigMaps.onEvent((e) => {
      if (e.type === 'DELETED') return;
      try {
        const next = frontProxyConfigFrom(e.object.data);
        const changed = next.caPem !== this.frontProxy.caPem;
        this.frontProxy = next;
        if (changed) server.setSecureContext(this.secureContext());
        this.log(`front-proxy configuration reloaded (${AUTH_CONFIGMAP_PATH})`);
      } catch (err) {
        this.log(`ignoring an unusable ${AUTH_CONFIGMAP_PATH}: ${(err as Error).message}`);
      }
    });
    this.tlsProfiles.onEvent((e) => {
      const next = e.type === 'DELETED' ? DEFAULT_TLS_PROFILE : this.profileOf(e.object.data);
      if (!next || JSON.stringify(next) === JSON.stringify(this.tlsProfile)) return;
      this.tlsProfile = next;
      server.setSecureContext(this.secureContext());
      this.log(
        `TLS profile from ${ADDON_MANAGER_NAMESPACE}/${TLS_PROFILE_CONFIGMAP}: minimum ${next.minVersion}` +
          `${next.cipherSuites.length ? `, cipher suites ${next.cipherSuites.join(',')}` : ''}`,
      );
    });
  }

  private profileOf(data: Record<string, string> | undefined): TlsProfile | null {
    try {
      return tlsProfileFromData(data);
    } catch (err) {
      this.log(`ignoring an unusable ${ADDON_MANAGER_NAMESPACE}/${TLS_PROFILE_CONFIGMAP}, keeping the last good profile: ${(err as Error).message}`);
      return null;
    }
  }
}
