import { register } from 'node:module';
import { pathToFileURL } from 'node:url';
import type { CommandModule } from 'yargs';
import { inPodClient } from '../../../addons/framework/agent-env.js';
import { AddonManager } from '../../../addons/framework/manager.js';
import type { AddonDefinition } from '../../../addons/framework/types.js';
import { setAgentBundle, setAgentImage } from '../../../addons/dev/agent-workload.js';
import { AGENT_FILE } from '../../../addons/dev/names.js';
import { InvalidInputError } from '../../../errors.js';
import { parseDuration } from '../../../tunnel/flags.js';
import { repeat, runUntilSignal, stamp, watchUntilAborted, Wakeup } from './run-loop.js';

interface Args {
  module?: string;
  agent?: string;
  'agent-code'?: string;
  image?: string;
  'resync-interval': string;
}

/** `ocm-lab/…` imports of a bundle resolve to this package (module-hooks.ts). */
function registerModuleHooks(): void {
  register('../../../addons/dev/module-hooks.js', import.meta.url);
}

async function importFile(flag: string, file: string): Promise<Record<string, unknown>> {
  try {
    return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    throw new InvalidInputError(`--${flag} ${file}: importing it failed: ${(err as Error).stack ?? (err as Error).message}`);
  }
}

function addonDefinitionOf(file: string, mod: Record<string, unknown>): AddonDefinition {
  const def = (mod.default ?? mod.addon) as Partial<AddonDefinition> | undefined;
  if (!def || typeof def !== 'object' || typeof def.name !== 'string' || typeof def.agentManifests !== 'function') {
    throw new InvalidInputError(`--module ${file} exports no AddonDefinition: its default export (or export 'addon') needs at least name and agentManifests()`);
  }
  return def as AddonDefinition;
}

/**
 * `ocm-lab internal run-addon`: runs an addon built by `ocm-lab addon dev` from its bundle.
 * `--module`: the hub manager (the framework's AddonManager over the bundle's AddonDefinition),
 * reading the agent bundle from the hub ConfigMap `--agent-code` before each pass, or, with `--image`
 * (the addon's own image, which this process runs in), having its agents run that image's bundle;
 * `--agent`: the agent, i.e. the bundle's own main.
 */
export const runAddonCommand: CommandModule<object, Args> = {
  command: 'run-addon',
  describe: 'run the manager (--module) or agent (--agent) of an addon bundle',
  builder: (y) =>
    y
      .option('module', { type: 'string', describe: 'the manager bundle (exports an AddonDefinition)' })
      .option('agent', { type: 'string', describe: 'the agent bundle (runs on import)' })
      .option('agent-code', { type: 'string', describe: `NAMESPACE/NAME of the hub ConfigMap whose ${AGENT_FILE} is the agent bundle` })
      .option('image', { type: 'string', describe: "manager: the addon's own image, whose bundles the agents run (instead of --agent-code)" })
      .option('resync-interval', { type: 'string', default: '1s', describe: 'manager: time between reconcile passes' }) as never,
  handler: async (a) => {
    if (!!a.module === !!a.agent) throw new InvalidInputError('give exactly one of --module (a manager bundle) and --agent (an agent bundle)');
    registerModuleHooks();
    if (a.agent) {
      process.once('SIGTERM', () => process.exit(0));
      stamp(`running agent bundle ${a.agent}`);
      await importFile('agent', a.agent);
      return;
    }
    const file = a.module ?? '';
    const interval = parseDuration('resync-interval', a['resync-interval']);
    if (a.image) {
      const addon = addonDefinitionOf(file, await importFile('module', file));
      const hub = await inPodClient('run-addon');
      const manager = new AddonManager(hub, addon, stamp);
      const bundle = setAgentImage(a.image);
      stamp(`${addon.name} addon manager started from ${file} in ${a.image}; agents run that image (code ${bundle.hash})`);
      await runUntilSignal((signal) => repeat(signal, interval, () => manager.reconcileAndLog()));
      return;
    }
    const [ns, name] = (a['agent-code'] ?? '').split('/');
    if (!ns || !name)
      throw new InvalidInputError(
        `--agent-code ${JSON.stringify(a['agent-code'] ?? '')} must be NAMESPACE/NAME of the ConfigMap with the agent bundle (or give --image)`,
      );
    const addon = addonDefinitionOf(file, await importFile('module', file));
    const hub = await inPodClient('run-addon');
    const manager = new AddonManager(hub, addon, stamp);
    let agentHash = '';
    stamp(`${addon.name} addon manager started from ${file}`);
    // A new agent bundle starts a pass at once rather than at the next tick: addon dev's save-to-running.
    const wakeup = new Wakeup();
    await runUntilSignal((signal) =>
      Promise.all([
        watchUntilAborted(hub, `/api/v1/namespaces/${ns}/configmaps`, { fieldSelector: `metadata.name=${name}` }, () => wakeup.wake(), signal),
        repeat(
          signal,
          interval,
          async () => {
            const cm = await hub.get<{ data?: Record<string, string> }>(`/api/v1/namespaces/${ns}/configmaps/${name}`);
            const bundle = setAgentBundle(cm.data?.[AGENT_FILE] ?? '');
            if (bundle.hash !== agentHash) stamp(`agent code ${(agentHash = bundle.hash)}`);
            await manager.reconcileAndLog();
          },
          wakeup,
        ),
      ]).then(() => undefined),
    );
  },
};
