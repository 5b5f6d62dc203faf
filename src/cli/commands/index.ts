import type { CommandModule } from 'yargs';

type Loader = () => Promise<CommandModule<any, any>>;

const lab = () => import('./lab-commands.js');

/**
 * Every top-level command but `internal` (main.ts loads that group on its own), in
 * help order. Each module stays thin: parse flags, call a library function that
 * tests call too, print the result. Modules are loaded on demand: some pull in
 * heavy libraries (the Kubernetes client alone costs half a second of start-up).
 */
const LOADERS: [name: string, load: Loader][] = [
  ['up', async () => (await lab()).upCommand],
  ['down', async () => (await lab()).downCommand],
  ['status', async () => (await lab()).statusCommand],
  ['cluster', async () => (await import('./cluster.js')).clusterCommand],
  ['get', async () => (await import('./get.js')).getCommand],
  ['create', async () => (await import('./create-work.js')).createCommand],
  ['kubeconfig', async () => (await lab()).kubeconfigCommand],
  ['logs', async () => (await import('./logs.js')).logsCommand],
  ['probe', async () => (await import('./probe.js')).probeCommand],
  ['proxy', async () => (await import('./proxy.js')).proxyCommand],
  ['cp-creds', async () => (await import('./cp-creds.js')).cpCredsCommand],
  ['addon', async () => (await import('./addon.js')).addonCommand],
  ['setup', async () => (await import('./setup.js')).setupCommand],
  ['registry', async () => (await import('./registry.js')).registryCommand],
  ['scenario', async () => (await import('./scenario.js')).scenarioCommand],
  ['tutorial', async () => (await import('./tutorial.js')).tutorialCommand],
  ['ui', async () => (await import('./ui.js')).uiCommand],
  ['conformance', async () => (await import('./conformance.js')).conformanceCommand],
  ['validate', async () => (await import('./validate.js')).validateCommand],
  ['versions', async () => (await import('./versions.js')).versionsCommand],
];

/** The command `name` names, or every command (for help, and to suggest one for a typo). */
export async function loadCommands(name?: string): Promise<CommandModule<any, any>[]> {
  const one = LOADERS.find(([n]) => n === name);
  return one ? [await one[1]()] : Promise.all(LOADERS.map(([, load]) => load()));
}
