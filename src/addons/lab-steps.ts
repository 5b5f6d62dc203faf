import fs from 'node:fs/promises';
import path from 'node:path';
import { KubeClient } from '../nodelet/kube-client.js';
import { logTail } from '../runtime/local/process.js';
import type { LocalContext } from '../runtime/local/runtime.js';
import type { Step } from '../runtime/types.js';
import { ocmLayout } from '../ocm/layout.js';
import { nodeletWorkDir } from '../nodelet/lab-steps.js';
import { ADDON_MANAGER_NAMESPACE } from './framework/names.js';
import { installAddonCrd, installAddonManager, LAB_ADDONS, managerName, waitForAddonAvailable, type LabAddon } from './install.js';

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
              progress(changed.length ? changed.join(', ') : 'manager in place');
              const spokes = c.clusters.filter((cl) => !cl.hub).map((cl) => cl.name);
              await waitForAddonAvailable(client, addon, spokes, {
                timeoutMs: c.options.readyTimeoutMs ?? DEFAULT_TIMEOUT_MS,
                progress,
                diagnostics: () => managerLogTail(c, addon),
              });
              return `${crd === 'unchanged' ? '' : `CRD ${crd}; `}${changed.length ? 'manager deployed; ' : ''}Available on ${spokes.join(', ')}`;
            } finally {
              client.close();
            }
          },
        })),
    },
  ];
}
