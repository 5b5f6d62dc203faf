import { LabError } from '../../errors.js';
import { run } from '../../util/exec.js';
import { PodAddressPool } from './addresses.js';
import { hostPortCheck, type PortProtocol } from './host-port.js';
import { netnsPath, POD_GATEWAY, POD_INTERFACE, podNetnsName, podNetnsPrefix, uidKey, vethAlias, vpcVethName } from './names.js';

export interface PodNetworkOptions {
  labName: string;
  clusterName: string;
  /** The cluster's VPC namespace, `ocmlab.<lab>.<vpc>`: where the VPC ends of the pods' veths live. */
  vpcNetns: string;
  /** The cluster's pod range (the nodelet's `--pod-cidr`), inside the VPC subnet. */
  podCidr: string;
  /** The node's address (the cluster's address in the VPC). */
  nodeIP: string;
  log: (line: string) => void;
}

/** What a pod's containers join: the namespace (name and path for an OCI `network` namespace) and the pod's address. */
export interface PodSandboxNetwork {
  netns: string;
  netnsPath: string;
  podIP: string;
}

interface AddrInfo {
  ifname?: string;
  ifalias?: string;
  addr_info?: { family?: string; local?: string; prefixlen?: number }[];
}

function ipv4Of(link: AddrInfo | undefined): string | undefined {
  return link?.addr_info?.find((a) => a.family === 'inet' && a.prefixlen === 32)?.local;
}

/**
 * Every pod of one cluster in its own network namespace, with its own address from
 * the cluster's pod range, joined to the VPC namespace by a veth pair:
 *
 *   pod netns: lo up; eth0 <podIP>/32; 169.254.1.1 dev eth0 scope link; default via 169.254.1.1
 *   VPC netns: vp<hash> (proxy ARP, so it answers for 169.254.1.1); <podIP>/32 dev vp<hash>
 *
 * The VPC namespace forwards and answers the host's ARP for pod addresses (set up with
 * the VPC network), so the host, other clusters of the VPC and spokes (for a hub pod)
 * reach pods through the VPC's existing routes and rules.
 *
 * Every command names its namespace (`ip -n`, `ip netns exec`), so this works from
 * any namespace. State lives in the kernel only: after a restart the addresses are
 * read back from the pods' namespaces.
 */
export class PodNetwork {
  private readonly pool: PodAddressPool;
  private readonly prefix: string;
  /** uidKey → address, for the pods of this cluster. */
  private readonly pods = new Map<string, string>();
  private loaded: Promise<void> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private serviceRules: string | null = null;
  /** The service rules each pod namespace holds, so unchanged text is not written again. */
  private readonly appliedRules = new Map<string, string>();

  constructor(private readonly opts: PodNetworkOptions) {
    this.pool = new PodAddressPool(opts.podCidr);
    this.prefix = podNetnsPrefix(opts.labName, opts.clusterName);
  }

  /** Runs `fn` after everything queued before it: setups, teardowns and rule updates never interleave. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Finds the pods of this cluster that already have a namespace (a nodelet restart) and their addresses. */
  private load(): Promise<void> {
    this.loaded ??= (async () => {
      for (const netns of await this.podNamespaces()) {
        const ip = ipv4Of(await this.readPodInterface(netns));
        const key = netns.slice(this.prefix.length);
        if (ip && this.pool.reserve(ip)) this.pods.set(key, ip);
      }
      if (this.pods.size) this.opts.log(`pod network: found ${this.pods.size} pod namespace(s) of ${this.opts.clusterName} from before`);
    })().catch((err: unknown) => {
      this.loaded = undefined;
      throw err;
    });
    return this.loaded;
  }

  /** The pod namespaces of this cluster that exist now. */
  async podNamespaces(): Promise<string[]> {
    const out = (await run('ip', ['-j', 'netns', 'list'])).stdout.trim();
    const names = out ? (JSON.parse(out) as { name: string }[]).map((n) => n.name) : [];
    return names.filter((n) => n.startsWith(this.prefix) && !n.slice(this.prefix.length).includes('.'));
  }

  private async readPodInterface(netns: string): Promise<AddrInfo | undefined> {
    const r = await run('ip', ['-n', netns, '-j', 'addr', 'show', 'dev', POD_INTERFACE], { allowFailure: true });
    return r.exitCode === 0 ? (JSON.parse(r.stdout || '[]') as AddrInfo[])[0] : undefined;
  }

  private async vpcLinkExists(name: string): Promise<boolean> {
    return (await run('ip', ['-n', this.opts.vpcNetns, 'link', 'show', 'dev', name], { allowFailure: true })).exitCode === 0;
  }

  /**
   * Creates (or completes, after a crash or restart) the pod's namespace, veth, address
   * and routes, and writes the current service rules into it. Idempotent: a pod that
   * has a namespace keeps its address.
   */
  setup(podUid: string, podKey: string): Promise<PodSandboxNetwork> {
    return this.serial(async () => {
      try {
        return await this.setupNow(podUid);
      } catch (err) {
        throw new LabError('failure', `pod network of ${podKey} (cluster ${this.opts.clusterName}): ${(err as Error).message}`, { cause: err });
      }
    });
  }

  private async setupNow(podUid: string): Promise<PodSandboxNetwork> {
    await this.load();
    const { labName, clusterName, vpcNetns } = this.opts;
    const key = uidKey(podUid);
    const netns = podNetnsName(labName, clusterName, podUid);
    const veth = vpcVethName(labName, clusterName, podUid);

    if (!(await this.podNamespaces()).includes(netns)) await run('ip', ['netns', 'add', netns]);
    let podIP = this.pods.get(key);
    if (!podIP) {
      podIP = this.pool.allocate();
      this.pods.set(key, podIP);
    }
    // A pod end without its VPC end (or the reverse) is useless: start the pair again.
    const podEnd = await this.readPodInterface(netns);
    const vpcEnd = await this.vpcLinkExists(veth);
    if (!podEnd || !vpcEnd) {
      if (podEnd) await run('ip', ['-n', netns, 'link', 'del', POD_INTERFACE]);
      if (vpcEnd) await run('ip', ['-n', vpcNetns, 'link', 'del', veth]);
      await run('ip', ['-n', vpcNetns, 'link', 'add', veth, 'type', 'veth', 'peer', 'name', POD_INTERFACE, 'netns', netns]);
    }
    await ipBatch(netns, [
      ['link', 'set', 'lo', 'up'],
      ['addr', 'replace', `${podIP}/32`, 'dev', POD_INTERFACE],
      ['link', 'set', POD_INTERFACE, 'up'],
      ['route', 'replace', POD_GATEWAY, 'dev', POD_INTERFACE, 'scope', 'link'],
      ['route', 'replace', 'default', 'via', POD_GATEWAY, 'dev', POD_INTERFACE],
    ]);
    // proxy_arp: the VPC end answers the pod's ARP for 169.254.1.1 (without the usual random delay).
    await run('ip', ['netns', 'exec', vpcNetns, 'sysctl', '-q', '-w', `net.ipv4.conf.${veth}.proxy_arp=1`, `net.ipv4.neigh.${veth}.proxy_delay=0`]);
    await ipBatch(vpcNetns, [
      ['link', 'set', veth, 'alias', vethAlias(labName, clusterName, podUid)],
      ['link', 'set', veth, 'up'],
      ['route', 'replace', `${podIP}/32`, 'dev', veth, 'scope', 'link'],
    ]);
    if (this.serviceRules !== null) await this.writeRules(netns, this.serviceRules);
    return { netns, netnsPath: netnsPath(netns), podIP };
  }

  /**
   * For a hostNetwork pod: null when `port` is free on the node, else why not (for the
   * pod's Event). `ip` defaults to the node's address; '0.0.0.0' means every address.
   */
  hostPortCheck(ip: string | undefined, port: number, protocol: PortProtocol = 'TCP'): Promise<string | null> {
    return hostPortCheck(this.opts.vpcNetns, ip ?? this.opts.nodeIP, port, protocol);
  }

  /** The address of a pod that has its network (null when it has none). */
  podIP(podUid: string): string | null {
    return this.pods.get(uidKey(podUid)) ?? null;
  }

  /** Removes the pod's veth (and with it its routes) and namespace, and frees its address. Idempotent. */
  teardown(podUid: string): Promise<void> {
    return this.serial(() =>
      this.teardownNow(
        uidKey(podUid),
        podNetnsName(this.opts.labName, this.opts.clusterName, podUid),
        vpcVethName(this.opts.labName, this.opts.clusterName, podUid),
      ),
    );
  }

  private async teardownNow(key: string, netns: string, veth: string): Promise<void> {
    await this.load();
    // The VPC end goes first: a namespace still held by a process outlives `ip netns del`, and its veth with it.
    if (await this.vpcLinkExists(veth)) await run('ip', ['-n', this.opts.vpcNetns, 'link', 'del', veth]);
    if ((await this.podNamespaces()).includes(netns)) await run('ip', ['netns', 'del', netns]);
    const ip = this.pods.get(key);
    if (ip) this.pool.release(ip);
    this.pods.delete(key);
    this.appliedRules.delete(netns);
  }

  /**
   * Removes the network of every pod of this cluster whose UID is not in `liveUids`
   * (pods deleted while the nodelet was down), including VPC ends whose namespace is
   * already gone. Returns the namespaces removed.
   */
  cleanupOrphans(liveUids: Set<string>): Promise<string[]> {
    return this.serial(async () => {
      await this.load();
      const live = new Set([...liveUids].map(uidKey));
      const removed: string[] = [];
      for (const netns of await this.podNamespaces()) {
        const key = netns.slice(this.prefix.length);
        if (live.has(key)) continue;
        await this.teardownNow(key, netns, vpcVethName(this.opts.labName, this.opts.clusterName, key));
        removed.push(netns);
      }
      const aliasPrefix = `ocm-lab:${this.opts.labName}:${this.opts.clusterName}:`;
      const links = JSON.parse((await run('ip', ['-n', this.opts.vpcNetns, '-j', 'link', 'show'])).stdout || '[]') as AddrInfo[];
      for (const link of links) {
        const key = link.ifalias?.startsWith(aliasPrefix) ? link.ifalias.slice(aliasPrefix.length) : null;
        if (key && !live.has(key) && link.ifname) await run('ip', ['-n', this.opts.vpcNetns, 'link', 'del', link.ifname], { allowFailure: true });
      }
      if (removed.length) this.opts.log(`pod network: removed ${removed.length} namespace(s) of pods that no longer exist: ${removed.join(', ')}`);
      return removed;
    });
  }

  /**
   * Sets the service rules (iptables-restore input, see renderServiceRules) every pod
   * namespace of this cluster holds, writes them where they differ, and into every pod set
   * up later. Failures are reported per namespace; the others are still written.
   */
  setServiceRules(rules: string): Promise<void> {
    return this.serial(async () => {
      this.serviceRules = rules;
      const errors: string[] = [];
      for (const netns of await this.podNamespaces()) {
        if (this.appliedRules.get(netns) === rules) continue;
        await this.writeRules(netns, rules).catch((err: unknown) => errors.push((err as Error).message));
      }
      if (errors.length) throw new LabError('failure', `could not write service rules into every pod of ${this.opts.clusterName}:\n${errors.join('\n')}`);
    });
  }

  private async writeRules(netns: string, rules: string): Promise<void> {
    // Without --noflush: the pod's nat and filter tables are replaced as a whole, in one transaction.
    await run('ip', ['netns', 'exec', netns, 'iptables-restore'], { input: rules });
    this.appliedRules.set(netns, rules);
  }
}

async function ipBatch(netns: string, lines: string[][]): Promise<void> {
  await run('ip', ['-n', netns, '-batch', '-'], { input: `${lines.map((l) => l.join(' ')).join('\n')}\n` });
}
