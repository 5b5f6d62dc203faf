import { docker, LABEL_LAB, LABEL_ROLE } from '../../images/docker.js';
import { currentEngine, type NetworkFacts } from '../../images/engine/index.js';
import type { KindNetworkPlan } from './plan.js';

export async function inspectNetworks(names: readonly string[]): Promise<NetworkFacts[]> {
  const engine = await currentEngine();
  const found = await Promise.all(names.map((n) => engine.inspectNetwork(n)));
  return found.filter((n): n is NetworkFacts => n !== null);
}

/** The VPC networks of a lab, found by label (what `down` removes). */
export async function labNetworks(lab: string): Promise<string[]> {
  const r = await docker(['network', 'ls', '--filter', `label=${LABEL_LAB}=${lab}`, '--filter', `label=${LABEL_ROLE}=vpc`, '--format', '{{.Name}}']);
  return r.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

/**
 * The VPC's network, created when missing, isolated from the engine's other networks (the engine's form: Docker's
 * bridges are; Podman's need netavark's isolate option). A network of that name without our labels is somebody
 * else's: refused rather than taken over.
 */
export async function ensureNetwork(plan: KindNetworkPlan): Promise<'created' | 'exists'> {
  const engine = await currentEngine();
  const [existing] = await inspectNetworks([plan.name]);
  if (existing) {
    if (existing.labels[LABEL_LAB] !== plan.labels[LABEL_LAB]) {
      throw new Error(
        `a ${engine.name === 'podman' ? 'Podman' : 'Docker'} network named ${plan.name} exists and is not this lab's ` +
          `(labels: ${JSON.stringify(existing.labels)}); ` +
          `remove it (${engine.cli} network rm ${plan.name}) or name the lab differently`,
      );
    }
    return 'exists';
  }
  await docker(
    engine.networkCreateArgs({
      name: plan.name,
      labels: plan.labels,
      ...(plan.subnet ? { subnet: plan.subnet } : {}),
      ...(plan.gateway ? { gateway: plan.gateway } : {}),
    }),
  );
  return 'created';
}

export async function removeNetwork(name: string): Promise<boolean> {
  const r = await docker(['network', 'rm', name], { allowFailure: true });
  if (r.exitCode === 0) return true;
  if (/not found|No such network/i.test(r.stderr)) return false;
  throw new Error(`${(await currentEngine()).cli} network rm ${name} failed: ${r.stderr.trim()}`);
}
