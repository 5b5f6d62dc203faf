import type { LabConfig } from '../config/index.js';
import { runtimeDefinition, selectRuntime } from '../runtime/registry.js';
import type { LabStatus } from '../runtime/types.js';
import type { LabPicture, PictureCluster } from './picture.js';

// The addons' and the tunnels' modules are loaded only when the lab has OCM to ask: `status --svg` of a lab
// that is not up stays as quick as `status`.

type AddonReadings = Map<string, Map<string, boolean | null>>;

/** Each addon's Available on each managed cluster (cluster → addon → available); null where the hub could not say. */
async function readAddons(config: LabConfig, spokes: string[]): Promise<AddonReadings> {
  const readings: AddonReadings = new Map(spokes.map((s) => [s, new Map(config.addons.map((a) => [a, null]))]));
  const [{ hubClientFor }, { addonStates }] = await Promise.all([import('../addons/hub-client.js'), import('../addons/install.js')]);
  const hub = await hubClientFor(config);
  try {
    for (const addon of config.addons) {
      const states = await addonStates(hub, addon, spokes).catch(() => []);
      for (const s of states) readings.get(s.cluster)?.set(addon, s.available);
    }
  } finally {
    hub.close();
  }
  return readings;
}

/** `proxy health` for every managed cluster; when no tunnel opens at all, every tunnel is unhealthy. */
async function probeTunnels(config: LabConfig, spokes: string[]): Promise<Map<string, PictureCluster['tunnel']>> {
  const [{ hubClientFor }, { hubTunnel }, { proxyHealth }, { hubTunnelOptions }] = await Promise.all([
    import('../addons/hub-client.js'),
    import('../addons/cluster-proxy/hub-tunnel.js'),
    import('../addons/cluster-proxy/health.js'),
    import('./hub-tunnel-options.js'),
  ]);
  const hub = await hubClientFor(config);
  try {
    const { client } = await hubTunnel(hub, await hubTunnelOptions(config));
    try {
      const rows = await proxyHealth(hub, client, spokes);
      return new Map(rows.map((r) => [r.cluster, { healthy: r.probedHealth, latencyMs: r.latencyMs }]));
    } finally {
      client.close();
    }
  } catch {
    return new Map(spokes.map((s) => [s, { healthy: false, latencyMs: null }]));
  } finally {
    hub.close();
  }
}

async function hubEndpoint(config: LabConfig, status: LabStatus): Promise<string | null> {
  try {
    const clusters = await (await selectRuntime(status.runtime, { labName: config.name })).clusters(config);
    return clusters.find((c) => c.hub)?.internalServer ?? null;
  } catch {
    return null;
  }
}

/** The image registry the lab's runtime registers (kind's), as the picture draws it; null when its runtime has none. */
async function labRegistry(status: LabStatus): Promise<LabPicture['registry']> {
  try {
    const info = await (await (await runtimeDefinition(status.runtime)).imageRegistry?.())?.show();
    return info ? { host: info.host, hostFromClusters: info.hostFromClusters, running: info.running } : null;
  } catch {
    return null;
  }
}

/**
 * What `status --svg` draws: the status, and when the lab has OCM, each addon's availability per
 * managed cluster and each cluster-proxy tunnel probed (as `proxy health` does); the image registry where the runtime has one (kind).
 * A reading that fails is drawn as unknown (addons) or unhealthy (tunnels), never as a failure of status.
 */
export async function gatherLabPicture(config: LabConfig, status: LabStatus): Promise<LabPicture> {
  const spokes = status.clusters.filter((c) => !c.hub).map((c) => c.name);
  const ocm = status.exists && status.capabilities.includes('ocm');
  const [addons, tunnels, endpoint, registry] = await Promise.all([
    ocm && config.addons.length ? readAddons(config, spokes).catch((): AddonReadings => new Map()) : (new Map() as AddonReadings),
    ocm && config.addons.includes('cluster-proxy') ? probeTunnels(config, spokes) : new Map<string, PictureCluster['tunnel']>(),
    status.exists ? hubEndpoint(config, status) : null,
    status.exists ? labRegistry(status) : null,
  ]);
  return {
    lab: status.lab,
    runtime: status.runtime,
    exists: status.exists,
    vpcs: status.vpcs.map((v) => ({ name: v.name, subnet: v.subnet })),
    clusters: status.clusters.map((c) => ({
      name: c.name,
      vpc: c.vpc,
      hub: c.hub,
      apiServer: c.apiServer,
      ready: c.ready,
      addons: c.hub ? [] : config.addons.map((name) => ({ name, available: addons.get(c.name)?.get(name) ?? null })),
      tunnel: c.hub ? null : (tunnels.get(c.name) ?? null),
    })),
    hubEndpoint: endpoint,
    registry,
    isolation: { enforced: status.isolation.enforced, reason: status.isolation.reason },
  };
}
