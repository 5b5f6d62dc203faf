import net from 'node:net';
import { MissingPrerequisiteError } from '../../errors.js';
import { docker, dockerInspect, engineCli } from '../docker.js';
import { listen } from '../../util/listen.js';
import { DEFAULT_REGISTRY_PORT, isOurs, REGISTRY_CONTAINER, REGISTRY_INTERNAL_PORT, REGISTRY_LABELS, REGISTRY_PORT_ENV, REGISTRY_VOLUME } from './names.js';

interface RegistryInspect {
  State: { Running: boolean; Status: string };
  Config: { Labels: Record<string, string> | null; Image: string };
  HostConfig: { PortBindings?: Record<string, { HostIp?: string; HostPort?: string }[] | null> | null };
  NetworkSettings: { Networks: Record<string, unknown> | null };
}

/** What `ocm-lab registry` shows: where to push, where nodes pull from, where the data lives. */
export interface RegistryFacts {
  container: string;
  running: boolean;
  /** The published port on 127.0.0.1. */
  port: number;
  /** `localhost:<port>`: what you tag and push to on this machine. */
  host: string;
  /** `ocm-lab-registry:5000`: the registry from a node's containerd and from pods. */
  hostFromClusters: string;
  volume: string;
  image: string;
  networks: string[];
}

async function inspectRegistry(): Promise<RegistryInspect | null> {
  const [c] = await dockerInspect<RegistryInspect>('container', [REGISTRY_CONTAINER]);
  return c ?? null;
}

function publishedPort(c: RegistryInspect): number {
  const binding = c.HostConfig.PortBindings?.[`${REGISTRY_INTERNAL_PORT}/tcp`]?.[0];
  const port = Number(binding?.HostPort);
  if (!Number.isInteger(port) || port <= 0) {
    throw new MissingPrerequisiteError(`container ${REGISTRY_CONTAINER} publishes no port for ${REGISTRY_INTERNAL_PORT}/tcp`, {
      hint: `remove it (ocm-lab registry rm) and run up again`,
    });
  }
  return port;
}

function factsOf(c: RegistryInspect): RegistryFacts {
  const port = publishedPort(c);
  return {
    container: REGISTRY_CONTAINER,
    running: c.State.Running,
    port,
    host: `localhost:${port}`,
    hostFromClusters: `${REGISTRY_CONTAINER}:${REGISTRY_INTERNAL_PORT}`,
    volume: REGISTRY_VOLUME,
    image: c.Config.Image,
    networks: Object.keys(c.NetworkSettings.Networks ?? {}).sort(),
  };
}

function refuseForeign(what: 'container' | 'volume', labels: Record<string, string> | null | undefined, remove: string): void {
  if (isOurs(labels)) return;
  const name = what === 'container' ? REGISTRY_CONTAINER : REGISTRY_VOLUME;
  throw new MissingPrerequisiteError(`a Docker ${what} named ${name} exists and is not ocm-lab's (labels: ${JSON.stringify(labels ?? {})}); it is left alone`, {
    hint: `the lab's image registry needs that name: remove it yourself (${remove}) if it is not needed, then run up again`,
  });
}

/** The registry as it is now, or null when there is none (throws exit 3 when a container of that name is another tool's). */
export async function registryFacts(): Promise<RegistryFacts | null> {
  const c = await inspectRegistry();
  if (!c) return null;
  refuseForeign('container', c.Config.Labels, `docker rm -f ${REGISTRY_CONTAINER}`);
  return factsOf(c);
}

async function portFree(port: number): Promise<boolean> {
  const server = net.createServer();
  try {
    await listen(server, port, '127.0.0.1');
    return true;
  } catch {
    return false;
  } finally {
    server.close();
  }
}

/** The port to publish on: $OCM_LAB_REGISTRY_PORT (must be free: exit 3 otherwise), else 5001, else any free one. */
export async function choosePort(env: NodeJS.ProcessEnv = process.env, free: (port: number) => Promise<boolean> = portFree): Promise<number> {
  const asked = env[REGISTRY_PORT_ENV];
  if (asked) {
    const port = Number(asked);
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw new MissingPrerequisiteError(`${REGISTRY_PORT_ENV}=${asked} is not a TCP port`, {
        hint: `set ${REGISTRY_PORT_ENV} to a free port (1-65535) or unset it`,
      });
    }
    if (!(await free(port))) {
      throw new MissingPrerequisiteError(`port ${port} on 127.0.0.1, asked for the lab's image registry by ${REGISTRY_PORT_ENV}, is in use`, {
        hint: `set ${REGISTRY_PORT_ENV} to a free port, or unset it and ocm-lab picks one`,
      });
    }
    return port;
  }
  if (await free(DEFAULT_REGISTRY_PORT)) return DEFAULT_REGISTRY_PORT;
  const server = net.createServer();
  try {
    return await listen(server, 0, '127.0.0.1');
  } finally {
    server.close();
  }
}

async function ensureVolume(): Promise<void> {
  const [v] = await dockerInspect<{ Labels: Record<string, string> | null }>('volume', [REGISTRY_VOLUME]);
  if (v) return refuseForeign('volume', v.Labels, `docker volume rm ${REGISTRY_VOLUME}`);
  await docker(['volume', 'create', ...Object.entries(REGISTRY_LABELS).flatMap(([k, v]) => ['--label', `${k}=${v}`]), REGISTRY_VOLUME]);
}

function portInUse(stderr: string): boolean {
  return /port is already allocated|address already in use/i.test(stderr);
}

async function startOrExplain(port: number): Promise<void> {
  const r = await docker(['start', REGISTRY_CONTAINER], { allowFailure: true });
  if (r.exitCode === 0) return;
  if (portInUse(r.stderr)) {
    throw new MissingPrerequisiteError(`the lab's image registry ${REGISTRY_CONTAINER} is published on 127.0.0.1:${port}, which something else now uses`, {
      hint:
        'free that port, or remove the registry (ocm-lab registry rm; its cache goes too) and run up again: ' +
        `a new one picks a free port (${REGISTRY_PORT_ENV} to choose one)`,
    });
  }
  throw new Error(`${await engineCli()} start ${REGISTRY_CONTAINER} failed: ${r.stderr.trim()}`);
}

/** Waits until the registry answers its API base (GET /v2/ → 200). */
async function waitAnswers(port: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/v2/`, { signal: AbortSignal.timeout(2_000) });
      if (r.ok) return;
      last = `HTTP ${r.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  const logs = await docker(['logs', '--tail', '20', REGISTRY_CONTAINER], { allowFailure: true });
  throw new Error(
    `the lab's image registry did not answer http://127.0.0.1:${port}/v2/ within ${timeoutMs / 1000} s (${last}); its log:\n${logs.stdout}${logs.stderr}`,
  );
}

/**
 * The registry container, running and attached to `networks` (a lab's VPC
 * networks): created (with its volume) when missing, started when stopped.
 * Another tool's container or volume of the same name is refused, untouched.
 */
export async function ensureRegistry(
  image: string,
  networks: readonly string[],
  progress: (line: string) => void = () => {},
): Promise<{ facts: RegistryFacts; did: string[] }> {
  const did: string[] = [];
  let c = await inspectRegistry();
  if (c) refuseForeign('container', c.Config.Labels, `docker rm -f ${REGISTRY_CONTAINER}`);
  if (!c) {
    await ensureVolume();
    const port = await choosePort();
    progress(`creating ${REGISTRY_CONTAINER} (${image}) on 127.0.0.1:${port}, data in volume ${REGISTRY_VOLUME}`);
    const r = await docker(
      [
        'create',
        '--name',
        REGISTRY_CONTAINER,
        '--hostname',
        REGISTRY_CONTAINER,
        ...Object.entries(REGISTRY_LABELS).flatMap(([k, v]) => ['--label', `${k}=${v}`]),
        '--restart',
        'unless-stopped',
        '--publish',
        `127.0.0.1:${port}:${REGISTRY_INTERNAL_PORT}`,
        '--volume',
        `${REGISTRY_VOLUME}:/var/lib/registry`,
        // What the built image's config says, for distribution's own image too (whose config has no deletes).
        '--env',
        'REGISTRY_STORAGE_DELETE_ENABLED=true',
        '--env',
        'REGISTRY_LOG_LEVEL=warn',
        image,
      ],
      { allowFailure: true },
    );
    if (r.exitCode !== 0) throw new Error(`${await engineCli()} create ${REGISTRY_CONTAINER} failed: ${r.stderr.trim()}`);
    did.push(`created on 127.0.0.1:${port}`);
    c = await inspectRegistry();
    if (!c) throw new Error(`${await engineCli()} create ${REGISTRY_CONTAINER} succeeded but ${await engineCli()} inspect does not find it`);
  }
  const port = publishedPort(c);
  if (!c.State.Running) {
    progress(`starting ${REGISTRY_CONTAINER}`);
    await startOrExplain(port);
    if (!did.length) did.push('started');
  }
  for (const network of networks) {
    if (c.NetworkSettings.Networks?.[network]) continue;
    progress(`attaching ${REGISTRY_CONTAINER} to ${network}`);
    await docker(['network', 'connect', network, REGISTRY_CONTAINER]);
    did.push(`attached to ${network}`);
  }
  await waitAnswers(port);
  const facts = await registryFacts();
  if (!facts) throw new Error(`${REGISTRY_CONTAINER} disappeared while it was being started`);
  return { facts, did };
}

/** Detaches the registry from a lab's networks (before `down` removes them); the registry and its data stay. */
export async function detachRegistry(networks: readonly string[]): Promise<string[]> {
  const c = await inspectRegistry();
  if (!c || !isOurs(c.Config.Labels)) return [];
  const attached = networks.filter((n) => c.NetworkSettings.Networks?.[n]);
  for (const n of attached) await docker(['network', 'disconnect', '--force', n, REGISTRY_CONTAINER], { allowFailure: true });
  return attached;
}

/** `ocm-lab registry rm`: the container and its volume (the cache); a container or volume of that name that is not ours is refused. */
export async function removeRegistry(): Promise<string[]> {
  const removed: string[] = [];
  const c = await inspectRegistry();
  if (c) {
    refuseForeign('container', c.Config.Labels, `docker rm -f ${REGISTRY_CONTAINER}`);
    await docker(['rm', '--force', REGISTRY_CONTAINER]);
    removed.push(`container ${REGISTRY_CONTAINER}`);
  }
  const [v] = await dockerInspect<{ Labels: Record<string, string> | null }>('volume', [REGISTRY_VOLUME]);
  if (v) {
    refuseForeign('volume', v.Labels, `docker volume rm ${REGISTRY_VOLUME}`);
    const r = await docker(['volume', 'rm', REGISTRY_VOLUME], { allowFailure: true });
    if (r.exitCode !== 0) throw new Error(`${await engineCli()} volume rm ${REGISTRY_VOLUME} failed: ${r.stderr.trim()}`);
    removed.push(`volume ${REGISTRY_VOLUME}`);
  }
  return removed;
}
