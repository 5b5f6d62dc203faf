import { docker, dockerInspect, engineCli, LABEL_LAB } from '../../images/docker.js';
import type { HubEndpointPlan } from './plan.js';

interface ContainerInspect {
  Name: string;
  State: { Running: boolean; Status: string };
  Config: { Labels: Record<string, string> | null; Image: string };
  NetworkSettings: { Networks: Record<string, { IPAddress: string }> };
}

export async function inspectContainer(name: string): Promise<ContainerInspect | null> {
  const [c] = await dockerInspect<ContainerInspect>('container', [name]);
  return c ?? null;
}

/**
 * The hub's published endpoints on every VPC network: a container of ours on
 * the hub's network and each other VPC's, forwarding only the hub's published
 * ports to the hub node. Spokes resolve its name (Docker's embedded DNS, per
 * network) and never need a route to the hub's network. Idempotent: creates,
 * attaches missing networks, starts.
 */
export async function ensureHubEndpoint(plan: HubEndpointPlan, progress: (line: string) => void = () => {}): Promise<string> {
  let c = await inspectContainer(plan.name);
  const did: string[] = [];
  if (c && c.Config.Labels?.[LABEL_LAB] !== plan.labels[LABEL_LAB]) {
    throw new Error(
      `a container named ${plan.name} exists and is not this lab's (labels: ${JSON.stringify(c.Config.Labels)}); ` +
        `remove it (docker rm -f ${plan.name}) or name the lab differently`,
    );
  }
  if (!c) {
    const [first] = plan.networks;
    const [entrypoint, ...args] = plan.command;
    if (!first || !entrypoint) throw new Error('internal: hub endpoint without networks or command');
    progress(`creating ${plan.name} (${plan.image}) on ${first}`);
    const labels = Object.entries(plan.labels).flatMap(([k, v]) => ['--label', `${k}=${v}`]);
    await docker([
      'create',
      '--name',
      plan.name,
      '--hostname',
      plan.name,
      ...labels,
      '--network',
      first,
      '--restart',
      'unless-stopped',
      '--entrypoint',
      entrypoint,
      plan.image,
      ...args,
    ]);
    did.push('created');
    c = await inspectContainer(plan.name);
    if (!c) throw new Error(`${await engineCli()} create ${plan.name} succeeded but ${await engineCli()} inspect does not find it`);
  }
  for (const network of plan.networks) {
    if (c.NetworkSettings.Networks[network]) continue;
    progress(`attaching ${plan.name} to ${network}`);
    await docker(['network', 'connect', network, plan.name]);
    did.push(`attached to ${network}`);
  }
  if (!c.State.Running) {
    await docker(['start', plan.name]);
    did.push('started');
  }
  return did.length ? did.join(', ') : 'running';
}

/** Removes the container when it exists; false when there was none (`docker rm -f` exits 0 either way). */
export async function removeContainer(name: string): Promise<boolean> {
  if (!(await inspectContainer(name))) return false;
  const r = await docker(['rm', '-f', '-v', name], { allowFailure: true });
  if (r.exitCode === 0) return true;
  if (/No such container/i.test(r.stderr)) return false;
  throw new Error(`${await engineCli()} rm -f ${name} failed: ${r.stderr.trim()}`);
}
