import { NotReadyError } from '../../errors.js';
import type { KubeClient } from '../../kube/client.js';
import { applyObject, conditionOf, deleteIfPresent, getOrNull, objectPath, type KubeObject } from '../../kube/objects.js';
import { upstreamAddonCrds } from './crds.js';
import { upstreamHubObjects } from './hub-objects.js';
import type { UpstreamAddon } from './names.js';
import { sleep } from '../../kube/wait.js';

async function waitEstablished(hub: KubeClient, crd: KubeObject, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = await getOrNull<KubeObject>(hub, objectPath(crd));
    if (conditionOf(current, 'Established')?.status === 'True') return;
    if (Date.now() > deadline) throw new NotReadyError(`CRD ${crd.metadata.name} (upstream) was not Established within ${timeoutMs / 1000} s`);
    await sleep(100);
  }
}

/**
 * A Deployment's selector cannot change: when a manager of the other
 * implementation (same name, other labels) is there, it goes first.
 */
async function replaceIfSelectorDiffers(hub: KubeClient, desired: KubeObject): Promise<boolean> {
  if (desired.kind !== 'Deployment') return false;
  const current = await getOrNull<KubeObject & { spec?: { selector?: unknown } }>(hub, objectPath(desired));
  const wanted = (desired as KubeObject & { spec?: { selector?: unknown } }).spec?.selector;
  if (!current || JSON.stringify(current.spec?.selector) === JSON.stringify(wanted)) return false;
  await deleteIfPresent(hub, objectPath(desired), { propagationPolicy: 'Foreground' });
  const deadline = Date.now() + 60_000;
  while (await getOrNull(hub, objectPath(desired))) {
    if (Date.now() > deadline)
      throw new NotReadyError(
        `Deployment ${desired.metadata.namespace}/${desired.metadata.name} of the other addon implementation did not go away within 60 s`,
      );
    await sleep(200);
  }
  return true;
}

/**
 * Installs upstream's manager of `addon` on the hub as its Helm chart does: the
 * CRDs (from the pinned module in the Go module cache), then the chart's
 * objects. The manager and OCM's addon-manager do the rest (ManagedClusterAddOns
 * from the Placement, agents through ManifestWorks). Returns what changed.
 */
export async function installUpstreamAddon(
  hub: KubeClient,
  addon: UpstreamAddon,
  spokes: readonly string[],
  progress?: (line: string) => void,
): Promise<string[]> {
  const changed: string[] = [];
  for (const crd of await upstreamAddonCrds(addon, progress)) {
    const result = await applyObject(hub, crd);
    if (result !== 'unchanged') changed.push(`CRD ${crd.metadata.name} ${result}`);
    await waitEstablished(hub, crd, 30_000);
  }
  for (const obj of upstreamHubObjects(addon, spokes)) {
    if (await replaceIfSelectorDiffers(hub, obj)) changed.push(`${obj.kind}/${obj.metadata.name} of ocm-lab's implementation removed`);
    const result = await applyObject(hub, obj);
    if (result !== 'unchanged') changed.push(`${obj.kind}/${obj.metadata.name} ${result}`);
  }
  return changed;
}
