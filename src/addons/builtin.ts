import type { AddonName, AddonRequirement, ProxyEntrypoint } from '../config/types.js';
import type { KubeClient } from '../kube/client.js';
import type { KubeObject } from '../kube/objects.js';
import type { AddonInstall } from './framework/install-strategy.js';
import type { AddonDefinition, PolicyRule } from './framework/types.js';

/** What the lab gives a manager's flags: the hub address its agents dial and cluster-proxy's entrypoint type. */
interface ManagerLab {
  hubAddress: string;
  proxyEntrypoint?: ProxyEntrypoint;
}

/** A flag of `ocm-lab internal addon-manager` for one addon (string-valued). */
interface ManagerFlag {
  describe: string;
  choices?: readonly string[];
}

/** What the addon adds to the hub beside its manager, as `up`, its dry-run and uninstall handle it. */
interface HubExtras {
  /** What `up --dry-run` lists (e.g. `Deployment ns/name`) when the lab runs our build. */
  plan?: string[];
  /** Installed by `up` after the manager; what changed. */
  install?(hub: KubeClient, options: { image?: string }): Promise<string[]>;
  /** Waited for by `up` once the addon is Available on its clusters. */
  ready?(hub: KubeClient, timeoutMs: number, progress: (line: string) => void): Promise<void>;
  /** The Deployments uninstall stops with the managers (before the agents leave, so nothing recreates what follows). */
  workloads?(): Promise<KubeObject[]>;
  /** The rest, deleted with the hub side at uninstall (APIServices first, whoever lists them). */
  objects?(): Promise<KubeObject[]>;
}

/** What the agent leaves on a cluster that `addon disable` removes there (the work agent removes only what it applied). */
interface ClusterLeftovers {
  /** Said when the lab has no admin kubeconfig of the cluster: what stays. */
  stays: string;
  /** Named in the progress line of the removal. */
  title: string;
  /** The objects to delete on the cluster, beside the agent's hub kubeconfig Secret. */
  find(spoke: KubeClient): Promise<KubeObject[]>;
}

/**
 * A built-in addon as the lab installs it: what generic code (addons/install.ts, placements.ts,
 * enablement.ts, lab-addons.ts, uninstall.ts, the dry-run and `internal addon-manager`) reads
 * instead of branching on its name. An addon is its folder and its line in addons/registry.ts;
 * its `builtin.ts` stays light (constants only) and loads the addon's modules when asked.
 */
export interface BuiltinAddon {
  name: AddonName;
  /** The built-in addons a lab must run beside it, and why; a lab file that names it without them is refused. */
  requires?: AddonRequirement;
  /** Its CRDs: files under manifests/crds/, applied before the manager starts and deleted at uninstall. */
  crds?: readonly string[];
  /**
   * What its manager does on the hub beyond the framework's rules. The lab's managers share one
   * ClusterRole's rules: every manager is granted the rules of every built-in addon.
   */
  managerRules?: readonly PolicyRule[];
  /** Flags of its manager beyond `--addon`, from the lab. */
  managerArgs?(lab: ManagerLab): string[];
  /** Hub objects made with its manager and removed with it (cluster-proxy: its agents' TokenReview permission). */
  managerObjects?(): KubeObject[];
  /** The flags `internal addon-manager --addon <name>` takes for it. */
  managerFlags?: Readonly<Record<string, ManagerFlag>>;
  /** The addon on the framework, as its manager runs it, from the manager's flags; `log` writes the manager's log. */
  definition(flags: Readonly<Record<string, string | undefined>>, log: (line: string) => void): Promise<AddonDefinition>;
  /** Its default install strategy (upstream's default for it; docs/addons.md, "Install strategy"). */
  install: AddonInstall;
  /** What the Placement spec of its strategy holds beside `clusterSets: [global]`, as its chart writes it. */
  placementSpec?: Readonly<Record<string, unknown>>;
  /** Namespaces of its own that its agents run in on the spokes, removed at uninstall (not the klusterlet's shared addon namespace). */
  agentNamespaces?: readonly string[];
  /** Namespaces of its own on the hub, removed at uninstall. */
  hubNamespaces?: readonly string[];
  /**
   * Enabled and disabled cluster by cluster with `addon enable|disable` (helloworld): the first
   * enable installs its manager, the last disable removes it. Otherwise it comes and goes with the
   * lab file's `addons:`.
   */
  enabledPerCluster?: boolean;
  /** What it adds to the hub beside its manager (cluster-gateway's aggregated API server). */
  hub?: HubExtras;
  /** What its agent leaves on a cluster that disable removes. */
  clusterLeftovers?: ClusterLeftovers;
}
