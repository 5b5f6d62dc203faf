import { KubeClient } from '../kube/client.js';
import type { Step } from '../runtime/types.js';
import { hubOf, spokesOf, timeoutOf, type InstallContext } from '../ocm/install-context.js';
import { deploymentSummary } from '../ocm/operator-install.js';
import { ADDON_MANAGER_NAMESPACE } from './framework/names.js';
import { installAddonCrds, installAddonManager, managerName, waitForAddonAvailable } from './install.js';
import type { KubeClient as Client } from '../kube/client.js';
import type { AddonName } from '../config/types.js';
import { builtinAddon, builtinAddonNames } from './registry.js';
import { ensureLabAddonPlacements, ensureManagedClusterAddOns, waitForDecisions } from './enablement.js';
import {
  installUpstreamAddon,
  runsUpstream,
  waitForUpstreamAgents,
  UPSTREAM_MANAGER_DEPLOYMENT,
  UPSTREAM_RELEASE_NAMESPACE,
  type UpstreamAddon,
} from './upstream/index.js';

/** The lab file's addons, in registry order. */
function labAddons(ctx: InstallContext): AddonName[] {
  return builtinAddonNames().filter((a) => ctx.config.addons.includes(a));
}

/** Upstream's Go addon in place of ours: its chart's hub objects, then the same wait for Available on every spoke. */
async function upstreamAddon(c: InstallContext, client: Client, addon: UpstreamAddon, spokes: string[], progress: (line: string) => void): Promise<string> {
  const changed = await installUpstreamAddon(client, addon, spokes, progress);
  progress(changed.length ? changed.join(', ') : 'upstream manager in place');
  await waitForAddonAvailable(client, addon, spokes, {
    timeoutMs: timeoutOf(c),
    progress,
    diagnostics: () => deploymentSummary(client, UPSTREAM_RELEASE_NAMESPACE, [UPSTREAM_MANAGER_DEPLOYMENT[addon]]),
  });
  await waitForUpstreamAgents(addon, spokesOf(c), timeoutOf(c), progress);
  return `upstream ${addon}${changed.length ? ' deployed' : ''}; Available on ${spokes.join(', ')}`;
}

/**
 * The `up` steps for the lab's addons (after OCM accepted the clusters): each addon's
 * CRD and manager on the hub, then the wait until it is Available on every spoke.
 */
export function addonSteps(): Step<InstallContext>[] {
  return [
    {
      title: 'Addons',
      concurrent: true,
      children: (ctx) =>
        labAddons(ctx).map((addon) => ({
          title: addon,
          run: async (c: InstallContext, progress: (line: string) => void) => {
            const hub = hubOf(c);
            const client = await KubeClient.fromKubeconfig(hub.kubeconfig);
            try {
              const spokes = spokesOf(c).map((cl) => cl.name);
              if (runsUpstream(c.config, addon)) return await upstreamAddon(c, client, addon, spokes, progress);
              const definition = builtinAddon(addon);
              const crd = await installAddonCrds(client, addon);
              // Its install strategy's Placements before the manager, as upstream's charts (the manager follows their decisions).
              const { strategy, changed } = await ensureLabAddonPlacements(client, addon);
              changed.push(...(await installAddonManager(client, addon, hub.internalAddress, hub.ocmLabImage, c.config.clusterProxy?.entrypoint)));
              if (definition.hub?.install) changed.push(...(await definition.hub.install(client, hub.ocmLabImage ? { image: hub.ocmLabImage } : {})));
              // An addon enabled per cluster (helloworld) that the lab file names goes on every spoke (Manual: one ManagedClusterAddOn each).
              if (definition.enabledPerCluster && strategy !== 'AllClusters' && strategy.type === 'Manual')
                changed.push(...(await ensureManagedClusterAddOns(client, addon, spokes)).map((cl) => `ManagedClusterAddOn ${cl}/${addon} created`));
              progress(changed.length ? changed.join(', ') : 'manager in place');
              const decided = strategy !== 'AllClusters' && strategy.type === 'Placements' ? await waitForDecisions(client, strategy, timeoutOf(c)) : null;
              const targets = decided ? spokes.filter((s) => decided.has(s)) : spokes;
              await waitForAddonAvailable(client, addon, targets, {
                timeoutMs: timeoutOf(c),
                progress,
                diagnostics: () => deploymentSummary(client, ADDON_MANAGER_NAMESPACE, [managerName(addon)]),
              });
              await definition.hub?.ready?.(client, timeoutOf(c), progress);
              const where = targets.join(', ') || 'no cluster (its Placement decides none)';
              return `${crd === 'unchanged' ? '' : `CRD ${crd}; `}${changed.length ? 'manager deployed; ' : ''}Available on ${where}`;
            } finally {
              client.close();
            }
          },
        })),
    },
  ];
}
