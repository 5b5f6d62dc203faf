import fs from 'node:fs/promises';
import path from 'node:path';
import { KubeClient } from '../kube/client.js';
import { logTail } from '../runtime/local/process.js';
import type { LocalContext } from '../runtime/local/runtime.js';
import type { Step } from '../runtime/types.js';
import { ocmLayout } from '../ocm/layout.js';
import { nodeletWorkDir } from '../nodelet/lab-steps.js';
import { ADDON_MANAGER_NAMESPACE } from './framework/names.js';
import { installAddonCrd, installAddonManager, LAB_ADDONS, managerName, waitForAddonAvailable, type LabAddon } from './install.js';
import { CLUSTER_GATEWAY } from './cluster-gateway/constants.js';
import { apiServiceAvailable, installGatewayServer } from './cluster-gateway/hub-install.js';
import { NotReadyError } from '../errors.js';
import type { KubeClient as Client } from '../kube/client.js';

const DEFAULT_TIMEOUT_MS = 150_000;

function labAddons(ctx: LocalContext): LabAddon[] {
  return LAB_ADDONS.filter((a) => (ctx.config.addons as string[]).includes(a));
}

/** The last lines of the addon manager's container log on the hub (the nodelet keeps it). */
async function managerLogTail(ctx: LocalContext, addon: LabAddon): Promise<string> {
  const hub = ctx.clusters.find((c) => c.hub);
  if (!hub) return '';
  const podsDir = path.join(nodeletWorkDir(hub), 'pods');
  const dirs = (await fs.readdir(podsDir).catch(() => [] as string[])).filter((d) => d.startsWith(`${ADDON_MANAGER_NAMESPACE}_${managerName(addon)}-`));
  const tails = await Promise.all(dirs.map(async (d) => `--- ${hub.name} ${ADDON_MANAGER_NAMESPACE}/${d.split('_')[1]} (last lines) ---\n${await logTail(path.join(podsDir, d, 'manager.log'), 15)}`));
  return tails.join('\n');
}

/** Waits until the hub's aggregator reaches the gateway (APIService v1alpha1.cluster.core.oam.dev Available). */
async function waitForApiService(hub: Client, timeoutMs: number, progress: (line: string) => void): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await apiServiceAvailable(hub);
    if (state.available) return;
    progress(`waiting for APIService v1alpha1.cluster.core.oam.dev to be Available (${state.message})`);
    if (Date.now() > deadline) {
      throw new NotReadyError(`APIService v1alpha1.cluster.core.oam.dev is not Available within ${Math.round(timeoutMs / 1000)} s: ${state.message}`, {
        hint: 'see the gateway log: ocm-lab logs hub open-cluster-management-cluster-gateway/<pod>',
      });
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * The `up` steps for the lab's addons (after OCM accepted the clusters): each addon's
 * CRD and manager on the hub, then the wait until it is Available on every spoke.
 */
export function addonSteps(): Step<LocalContext>[] {
  return [
    {
      title: 'Addons',
      concurrent: true,
      children: (ctx) =>
        labAddons(ctx).map((addon) => ({
          title: addon,
          run: async (c: LocalContext, progress: (line: string) => void) => {
            const hub = c.clusters.find((cl) => cl.hub);
            if (!hub) throw new Error('internal: the lab has no hub');
            const client = await KubeClient.fromKubeconfig(ocmLayout(hub).adminKubeconfig);
            try {
              const crd = await installAddonCrd(client, addon);
              const changed = await installAddonManager(client, addon, hub.address);
              if (addon === CLUSTER_GATEWAY) changed.push(...(await installGatewayServer(client)));
              progress(changed.length ? changed.join(', ') : 'manager in place');
              const spokes = c.clusters.filter((cl) => !cl.hub).map((cl) => cl.name);
              await waitForAddonAvailable(client, addon, spokes, {
                timeoutMs: c.options.readyTimeoutMs ?? DEFAULT_TIMEOUT_MS,
                progress,
                diagnostics: () => managerLogTail(c, addon),
              });
              if (addon === CLUSTER_GATEWAY) await waitForApiService(client, c.options.readyTimeoutMs ?? DEFAULT_TIMEOUT_MS, progress);
              return `${crd === 'unchanged' ? '' : `CRD ${crd}; `}${changed.length ? 'manager deployed; ' : ''}Available on ${spokes.join(', ')}`;
            } finally {
              client.close();
            }
          },
        })),
    },
  ];
}
