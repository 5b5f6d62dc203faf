import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';

/**
 * Rootful Podman with storage, networks and run state of the test's own (Debian's podman; bootstrap installs it with
 * OCM_LAB_PODMAN=1): every podman call a child makes (ocm-lab, kind's podman provider) reads the test's
 * containers.conf and storage.conf through $CONTAINERS_CONF and $CONTAINERS_STORAGE_CONF, so the machine's own
 * /var/lib/containers and /etc/containers/networks are never touched. `stop` removes everything it made: the storage
 * (`podman system reset`), the directories, and the iptables chains netavark leaves behind (docs/notes.md, "Podman
 * 4.3.1 here: a kind lab").
 *
 * How it differs from a user's rootful Podman, and why (each for this sandbox, none for the lab):
 * - `default_ulimits`: this sandbox's root lacks CAP_SYS_RESOURCE, so rootful Podman's nofile 1048576 fails in
 *   setrlimit; the limits are the process's own hard nofile and 30000 processes.
 * - `runtime = "runc"`: crun 1.8.1 refuses this host's hybrid cgroups.
 */
export interface PodmanEngine {
  /** Environment for child processes (podman, kind, ocm-lab) that should use it; $DOCKER_HOST names no engine. */
  env: NodeJS.ProcessEnv;
  /** The storage, network and run directories under one root (removed by `stop`). */
  root: string;
  /**
   * What is on the machine now that was not before `start` (empty after `stop`): netavark's iptables chains
   * (`filter/NETAVARK_FORWARD`), its run state, the root.
   */
  leftovers(): Promise<string[]>;
  stop(): Promise<void>;
}

const NETAVARK_CHAIN = /^NETAVARK/;
const NETAVARK_RUN_DIR = '/run/containers';
const TABLES = ['filter', 'nat'] as const;

async function chainsOf(table: string): Promise<string[]> {
  const saved = (await execa('iptables-save', ['-t', table], { reject: false })).stdout;
  return [...saved.matchAll(/^:(\S+) /gm)].map((m) => m[1] as string);
}

/** Each table's netavark chains now. */
async function netavarkChains(): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const t of TABLES)
    out.set(
      t,
      (await chainsOf(t)).filter((c) => NETAVARK_CHAIN.test(c)),
    );
  return out;
}

/** Removes `chains` of `table`: first every rule that jumps to one of them, then their rules, then the chains. */
async function removeChains(table: string, chains: readonly string[]): Promise<void> {
  if (!chains.length) return;
  const rules = (await execa('iptables', ['-t', table, '-S'], { reject: false })).stdout.split('\n');
  for (const rule of rules) {
    const m = /^-A (\S+) (.*)$/.exec(rule);
    if (!m || chains.includes(m[1] as string)) continue;
    const target = /(?:^| )-j (\S+)/.exec(m[2] as string)?.[1];
    if (target && chains.includes(target)) await execa('iptables', ['-t', table, '-D', m[1] as string, ...splitRule(m[2] as string)], { reject: false });
  }
  for (const c of chains) await execa('iptables', ['-t', table, '-F', c], { reject: false });
  for (const c of chains) await execa('iptables', ['-t', table, '-X', c], { reject: false });
}

/** An `iptables -S` rule's arguments: words, with double-quoted ones (comments) kept whole. */
function splitRule(rule: string): string[] {
  return [...rule.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) => (m[1] !== undefined ? m[1] : (m[2] as string)));
}

export async function startPodmanEngine(): Promise<PodmanEngine> {
  const root = await fs.mkdtemp('/var/tmp/ocm-lab-test-podman-');
  const before = await netavarkChains();
  // netavark keeps its run state (aardvark-dns's) in /run/containers/networks whatever containers.conf says.
  const runStateWasThere = await fs.stat(NETAVARK_RUN_DIR).then(
    () => true,
    () => false,
  );
  const hardNofile = Number((await execa('bash', ['-c', 'ulimit -Hn'])).stdout.trim()) || 1_048_576;
  const nofile = Math.min(hardNofile, 1_048_576);
  const containersConf = path.join(root, 'containers.conf');
  const storageConf = path.join(root, 'storage.conf');
  await fs.writeFile(
    containersConf,
    [
      '[containers]',
      `default_ulimits = ["nofile=${nofile}:${nofile}", "nproc=30000:30000"]`,
      '[engine]',
      'runtime = "runc"',
      `tmp_dir = "${root}/libpod-tmp"`,
      `volume_path = "${root}/volumes"`,
      '[network]',
      `network_config_dir = "${root}/networks"`,
      '',
    ].join('\n'),
  );
  await fs.writeFile(storageConf, ['[storage]', 'driver = "overlay"', `graphroot = "${root}/storage"`, `runroot = "${root}/run"`, ''].join('\n'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CONTAINERS_CONF: containersConf,
    CONTAINERS_STORAGE_CONF: storageConf,
    // No Docker engine answers here, so `auto` has to find Podman.
    DOCKER_HOST: `unix://${root}/no-docker.sock`,
  };
  delete env.OCM_LAB_ENGINE;
  const exists = (p: string) =>
    fs.stat(p).then(
      () => true,
      () => false,
    );
  const leftovers = async () => {
    const now = await netavarkChains();
    const chains = TABLES.flatMap((t) => (now.get(t) ?? []).filter((c) => !(before.get(t) ?? []).includes(c)).map((c) => `${t}/${c}`));
    const dirs = [...(runStateWasThere ? [] : [NETAVARK_RUN_DIR]), root];
    return [...chains, ...(await Promise.all(dirs.map(async (d) => ((await exists(d)) ? d : null)))).filter((d): d is string => d !== null)];
  };
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await execa('podman', ['system', 'reset', '--force'], { env, reject: false, timeout: 300_000 });
    const now = await netavarkChains();
    for (const t of TABLES)
      await removeChains(
        t,
        (now.get(t) ?? []).filter((c) => !(before.get(t) ?? []).includes(c)),
      );
    // Whatever overlay mounts a failed reset left under the root, then the root.
    const mounts = (await fs.readFile('/proc/self/mounts', 'utf8')).split('\n').map((l) => l.split(' ')[1] ?? '');
    for (const m of mounts.filter((m) => m.startsWith(`${root}/`)).reverse()) await execa('umount', ['-l', m], { reject: false });
    await fs.rm(root, { recursive: true, force: true });
    if (!runStateWasThere) await fs.rm(NETAVARK_RUN_DIR, { recursive: true, force: true });
  };
  try {
    const version = await execa('podman', ['version', '--format', '{{.Client.Version}}'], { env, reject: false, timeout: 60_000 });
    if (version.exitCode !== 0) throw new Error(`podman version (CONTAINERS_CONF=${containersConf}) failed: ${version.stderr}`);
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
  return { env, root, leftovers, stop };
}
