import type { KubeClient } from '../../kube/client.js';
import { serviceHostAliases } from './service-hosts.js';
import { Informer, RESYNCING } from '../../kube/informer.js';
import { renderServiceRules, type EndpointSliceLike, type ServiceLike, type ServiceRulesOptions } from './service-rules.js';

/** Where the rules go: PodNetwork.setServiceRules. */
interface ServiceRulesSink {
  setServiceRules(rules: string): Promise<void>;
}

export interface ServiceProxyOptions extends ServiceRulesOptions {
  /** A client with the `system:kube-proxy` identity (list/watch Services and EndpointSlices). */
  client: Pick<KubeClient, 'get' | 'watch'>;
  sink: ServiceRulesSink;
  log: (line: string) => void;
  /** How long to gather changes before rendering (a rollout changes many slices at once). */
  settleMs?: number;
}

/**
 * What kube-proxy does for a cluster, kept by the nodelet: watches Services and
 * EndpointSlices, renders the ClusterIP rules and hands them to the pods' namespaces
 * whenever they change. Starts writing once both collections were listed.
 */
export class ServiceProxy {
  private readonly services: Informer<ServiceLike & { metadata: { resourceVersion?: string } }>;
  private readonly slices: Informer<EndpointSliceLike & { metadata: { resourceVersion?: string } }>;
  private timer: NodeJS.Timeout | undefined;
  private lastRules: string | null = null;
  private writing: Promise<void> = Promise.resolve();
  private wroteOnce!: () => void;
  /** Resolves once rules rendered from a full list of both collections were written. */
  readonly firstWrite: Promise<void> = new Promise((resolve) => (this.wroteOnce = resolve));

  constructor(private readonly opts: ServiceProxyOptions) {
    const changed = () => this.schedule();
    this.services = new Informer(opts.client, '/api/v1/services', opts.log, {}, RESYNCING);
    this.slices = new Informer(opts.client, '/apis/discovery.k8s.io/v1/endpointslices', opts.log, {}, RESYNCING);
    for (const informer of [this.services, this.slices]) {
      informer.onEvent(changed);
      informer.onSync(changed);
    }
  }

  start(): void {
    this.services.start();
    this.slices.start();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    await Promise.all([this.services.stop(), this.slices.stop()]);
    await this.writing;
  }

  /** /etc/hosts entries for the cluster's Services as a pod of `namespace` names them (empty before the first list). */
  hostAliases(namespace: string): { ip: string; hostnames: string[] }[] {
    return this.services.hasSynced() ? serviceHostAliases(this.services.list(), namespace) : [];
  }

  /** The rules as of the last render (null before both collections were listed). */
  rules(): string | null {
    return this.lastRules;
  }

  /** Resolves after the next write of changed rules has finished (for tests and start-up). */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.render();
    }
    await this.writing;
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.render();
    }, this.opts.settleMs ?? 100);
  }

  private render(): void {
    if (!this.services.hasSynced() || !this.slices.hasSynced()) return;
    const rules = renderServiceRules(this.services.list(), this.slices.list(), { apiServer: this.opts.apiServer });
    if (rules === this.lastRules) return;
    this.lastRules = rules;
    this.writing = this.writing
      .then(() => this.opts.sink.setServiceRules(rules))
      .then(() => this.wroteOnce())
      .catch((err: unknown) => {
        // Written again on the next change; a pod set up meanwhile gets the new rules anyway.
        this.lastRules = null;
        this.opts.log(`service rules: ${(err as Error).message}`);
      });
  }
}
