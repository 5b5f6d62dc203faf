import type { CommandModule, Options } from 'yargs';
import { inPodClient } from '../../../addons/framework/agent-env.js';
import { AddonManager } from '../../../addons/framework/manager.js';
import { builtinAddon, builtinAddonNames, builtinAddons, isBuiltinAddon } from '../../../addons/registry.js';
import { InvalidInputError } from '../../../errors.js';
import { parseDuration } from '../../../tunnel/flags.js';
import { repeat, runUntilSignal, stamp } from './run-loop.js';

interface Args {
  addon: string;
  'resync-interval': string;
  [flag: string]: unknown;
}

/** Every built-in addon's own manager flags (its definition's managerFlags), as string options. */
function addonFlags(): Record<string, Options> {
  const flags: Record<string, Options> = {};
  for (const addon of builtinAddons())
    for (const [name, flag] of Object.entries(addon.managerFlags ?? {}))
      flags[name] = { type: 'string', describe: flag.describe, ...(flag.choices ? { choices: [...flag.choices] } : {}) };
  return flags;
}

/** The string values of the flags given, for the addon's definition. */
function stringFlags(a: Args): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(a).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** `ocm-lab internal addon-manager --addon NAME`: the hub manager of one of our addons (runs as a Deployment). */
export const addonManagerCommand: CommandModule<object, Args> = {
  command: 'addon-manager',
  describe: 'run the hub manager of an ocm-lab addon',
  builder: (y) =>
    y
      .option('addon', {
        type: 'string',
        demandOption: true,
        describe: builtinAddonNames()
          .join(', ')
          .replace(/, ([^,]+)$/, ' or $1'),
      })
      .options(addonFlags())
      .option('resync-interval', { type: 'string', default: '2s', describe: 'time between reconcile passes' }) as never,
  handler: async (a) => {
    if (!isBuiltinAddon(a.addon)) throw new InvalidInputError(`--addon ${JSON.stringify(a.addon)} is not one of ${builtinAddonNames().join(', ')}`);
    const addon = await builtinAddon(a.addon).definition(stringFlags(a), stamp);
    const interval = parseDuration('resync-interval', a['resync-interval']);
    const manager = new AddonManager(await inPodClient('addon-manager'), addon, stamp);
    stamp(`${addon.name} addon manager started`);
    await runUntilSignal((signal) => repeat(signal, interval, () => manager.reconcileAndLog()));
  },
};
