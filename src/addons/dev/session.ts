import fs from 'node:fs';
import path from 'node:path';
import { spokeClusters, type LabConfig } from '../../config/index.js';
import { LabError } from '../../errors.js';
import { KubeClient } from '../../kube/client.js';
import { clusterKubeconfigFile } from '../../paths.js';
import { hubClientFor } from '../hub-client.js';
import { waitForAddonAvailable } from '../install.js';
import { buildAddon, type AddonBundles } from './build.js';
import { inspectManagerBundle } from './inspect.js';
import { applyDevAddon, waitPodsRunning } from './load.js';
import { agentDeploymentName, imageCodeHash, managerDeploymentName } from './names.js';

export interface LoadResult {
  addon: string;
  managerHash: string;
  agentHash: string;
  /** What changed since the last load: nothing, the agent, the manager or both. */
  changed: ('manager' | 'agent')[];
  buildMs: number;
  /**
   * Per cluster (the hub for a manager-only change): ms from the save (or start) until a pod with the
   * new code is Ready there (its process started; the bundle's own start-up comes after).
   */
  runningMs: Record<string, number>;
}

export interface DevSessionOptions {
  progress: (line: string) => void;
  timeoutMs?: number;
  /**
   * The addon's own image (built from the project's Dockerfile, in the lab's registry): manager and agents run the
   * bundles in it instead of code ConfigMaps; the local build only names the addon and checks it.
   */
  image?: string;
}

/**
 * One `addon dev` session against a running lab: build, load, wait; `reload` again on every save.
 * Runtime-agnostic: it talks to the hub and the spokes through the lab's kubeconfigs only.
 */
export class DevSession {
  private last: AddonBundles | null = null;
  addon = '';

  private constructor(
    readonly dir: string,
    private readonly hub: KubeClient,
    private readonly spokes: { name: string; client: KubeClient }[],
    private readonly options: DevSessionOptions,
  ) {}

  static async open(config: LabConfig, dir: string, options: DevSessionOptions): Promise<DevSession> {
    const hub = await hubClientFor(config);
    const spokes = await Promise.all(
      spokeClusters(config).map(async (c) => ({ name: c.name, client: await KubeClient.fromKubeconfig(clusterKubeconfigFile(config.name, c.name)) })),
    );
    return new DevSession(path.resolve(dir), hub, spokes, options);
  }

  close(): void {
    this.hub.close();
    for (const s of this.spokes) s.client.close();
  }

  /** Builds and loads; waits until the new code runs (Available on every spoke the first time). `since`: when the save happened. */
  async load(since = Date.now()): Promise<LoadResult> {
    const timeoutMs = this.options.timeoutMs ?? 180_000;
    const built = await buildAddon(this.dir);
    const def = await inspectManagerBundle(built.manager.code, built.manager.hash);
    const image = this.options.image;
    // From an image, the pods carry the image's hash (imageCodeHash): a new tag is a new build.
    const bundles = image
      ? { ...built, manager: { ...built.manager, hash: imageCodeHash(image) }, agent: { ...built.agent, hash: imageCodeHash(image) } }
      : built;
    const first = !this.last || this.addon !== def.name;
    this.addon = def.name;
    const changed: LoadResult['changed'] = [];
    if (first || this.last?.manager.hash !== bundles.manager.hash) changed.push('manager');
    if (first || this.last?.agent.hash !== bundles.agent.hash) changed.push('agent');
    const result: LoadResult = {
      addon: def.name,
      managerHash: bundles.manager.hash,
      agentHash: bundles.agent.hash,
      changed,
      buildMs: bundles.ms,
      runningMs: {},
    };
    if (!changed.length) return result;
    this.options.progress(
      image
        ? `built ${def.name} in ${bundles.ms} ms to check it; running it from its image ${image} (code ${bundles.agent.hash})`
        : `built ${def.name} in ${bundles.ms} ms (manager ${bundles.manager.hash}, agent ${bundles.agent.hash}); loading ${changed.join(' and ')}`,
    );
    await applyDevAddon(this.hub, def.name, bundles, image);
    this.last = bundles;
    const report = (cluster: string, ms: number) =>
      this.options.progress(
        `${cluster}: new ${changed.includes('agent') ? 'agent' : 'manager'} pod Ready ${(ms / 1000).toFixed(1)} s after the ${first ? 'start' : 'save'}`,
      );
    if (changed.includes('agent')) {
      result.runningMs = await waitPodsRunning(
        this.spokes,
        { addon: def.name, labelSelector: `app=${agentDeploymentName(def.name)}`, hash: bundles.agent.hash },
        { since, timeoutMs, onRunning: report },
      );
    } else {
      result.runningMs = await waitPodsRunning(
        [{ name: 'hub', client: this.hub }],
        { addon: def.name, labelSelector: `app=${managerDeploymentName(def.name)}`, hash: bundles.manager.hash },
        { since, timeoutMs, onRunning: report },
      );
    }
    if (first) {
      await waitForAddonAvailable(
        this.hub,
        def.name,
        this.spokes.map((s) => s.name),
        { timeoutMs, progress: this.options.progress },
      );
      this.options.progress(`${def.name} is Available on ${this.spokes.map((s) => s.name).join(', ')}`);
    }
    return result;
  }

  /**
   * Watches DIR/src and reloads after every save (changes within 100 ms are one save) until the
   * signal aborts. A failing build or load is reported and the watch goes on.
   */
  async watch(signal: AbortSignal, onResult: (r: LoadResult) => void = () => undefined): Promise<void> {
    const src = path.join(this.dir, 'src');
    let pending: number | null = null;
    let running = false;
    let timer: NodeJS.Timeout | undefined;
    const run = async () => {
      if (running || pending === null) return;
      running = true;
      const since = pending;
      pending = null;
      try {
        const r = await this.load(since);
        if (!r.changed.length) this.options.progress('saved, but the bundles did not change: nothing to reload');
        else onResult(r);
      } catch (err) {
        this.options.progress(`reload failed: ${err instanceof LabError ? err.message : ((err as Error).stack ?? String(err))}`);
      } finally {
        running = false;
        if (pending !== null) timer = setTimeout(run, 0);
      }
    };
    const watcher = fs.watch(src, { recursive: true }, () => {
      pending ??= Date.now();
      clearTimeout(timer);
      timer = setTimeout(run, 100);
    });
    await new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
    clearTimeout(timer);
    watcher.close();
  }
}
