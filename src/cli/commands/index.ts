import type { CommandModule } from 'yargs';

type Loader = () => Promise<CommandModule<any, any>>;

/**
 * Every top-level command but `internal` (main.ts loads that group on its own), in
 * help order. Each module stays thin: parse flags, call a library function that
 * tests call too, print the result. Modules are loaded on demand: some pull in
 * heavy libraries (the Kubernetes client alone costs half a second of start-up). Written
 * `import(…).then((m) => m.name)`: knip sees which export that uses, where `(await import(…)).name`
 * counts as using them all (so unused exports of those modules went unreported).
 */
const LOADERS: [name: string, load: Loader][] = [
  ['up', () => import('./lab-commands.js').then((m) => m.upCommand)],
  ['down', () => import('./lab-commands.js').then((m) => m.downCommand)],
  ['status', () => import('./lab-commands.js').then((m) => m.statusCommand)],
  ['cluster', () => import('./cluster.js').then((m) => m.clusterCommand)],
  ['get', () => import('./get.js').then((m) => m.getCommand)],
  ['create', () => import('./create-work.js').then((m) => m.createCommand)],
  ['kubeconfig', () => import('./lab-commands.js').then((m) => m.kubeconfigCommand)],
  ['logs', () => import('./logs.js').then((m) => m.logsCommand)],
  ['probe', () => import('./probe.js').then((m) => m.probeCommand)],
  ['proxy', () => import('./proxy.js').then((m) => m.proxyCommand)],
  ['cp-creds', () => import('./cp-creds.js').then((m) => m.cpCredsCommand)],
  ['addon', () => import('./addon.js').then((m) => m.addonCommand)],
  ['setup', () => import('./setup.js').then((m) => m.setupCommand)],
  ['registry', () => import('./registry.js').then((m) => m.registryCommand)],
  ['scenario', () => import('./scenario.js').then((m) => m.scenarioCommand)],
  ['tutorial', () => import('./tutorial.js').then((m) => m.tutorialCommand)],
  ['ui', () => import('./ui.js').then((m) => m.uiCommand)],
  ['conformance', () => import('./conformance.js').then((m) => m.conformanceCommand)],
  ['validate', () => import('./validate.js').then((m) => m.validateCommand)],
  ['versions', () => import('./versions.js').then((m) => m.versionsCommand)],
];

/** The command `name` names, or every command (for help, and to suggest one for a typo). */
export async function loadCommands(name?: string): Promise<CommandModule<any, any>[]> {
  const one = LOADERS.find(([n]) => n === name);
  return one ? [await one[1]()] : Promise.all(LOADERS.map(([, load]) => load()));
}
