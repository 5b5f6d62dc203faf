/**
 * What main.ts reads of the command line before yargs loads (yargs and its helpers are about a
 * fifth of a short command's start-up): which command is named, and the whole of the commonest
 * `proxy kubectl` invocations. Anything these readers do not know for certain goes to yargs, which
 * stays the one place that validates, defaults and explains every option.
 */

/** The global options of main.ts that take a value (`--config X`, `-c X`, `--output X`, `-o X`). */
const GLOBAL_WITH_VALUE = new Set(['--config', '-c', '--output', '-o']);
const GLOBAL_FLAGS = new Set(['--verbose', '-v']);

/** The first positional argument (the command), skipping global options and their values; undefined when there is none. */
export function commandOf(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return undefined;
    if (GLOBAL_WITH_VALUE.has(a)) i++;
    else if (!a.startsWith('-')) return a;
  }
  return undefined;
}

export interface ProxyKubectlOptions {
  config: string | undefined;
  cluster: string;
  sa: string;
  interactive: boolean;
  hubKubeconfig: string | undefined;
  /** kubectl's arguments, everything after `--`. */
  kubectlArgs: string[];
}

/** `proxy kubectl`'s own options (commands/proxy.ts declares them for yargs; keep the two alike). */
const PROXY_KUBECTL_WITH_VALUE: Record<string, 'cluster' | 'sa' | 'hubKubeconfig' | 'config' | 'output'> = {
  '--cluster': 'cluster',
  '--sa': 'sa',
  '--hub-kubeconfig': 'hubKubeconfig',
  '--config': 'config',
  '-c': 'config',
  '--output': 'output',
  '-o': 'output',
};

/**
 * `ocm-lab [globals] proxy kubectl --cluster C --sa S [--hub-kubeconfig F] [-i] [-- args…]` read
 * by hand, each option once, in the `--name value` or `--name=value` form; null for anything else
 * (help, a typo, a repeated or unknown option, a missing value), which yargs then parses and
 * answers as before.
 */
export function parseProxyKubectl(args: readonly string[], env: NodeJS.ProcessEnv = process.env): ProxyKubectlOptions | null {
  const end = args.indexOf('--');
  const own = end < 0 ? args : args.slice(0, end);
  const values: Partial<Record<'cluster' | 'sa' | 'hubKubeconfig' | 'config' | 'output', string>> = {};
  const positional: string[] = [];
  let interactive = false;
  for (let i = 0; i < own.length; i++) {
    const a = own[i]!;
    const eq = a.indexOf('=');
    const name = a.startsWith('--') && eq > 0 ? a.slice(0, eq) : a;
    const key = PROXY_KUBECTL_WITH_VALUE[name];
    if (key) {
      const value = name === a ? own[++i] : a.slice(eq + 1);
      if (value === undefined || value === '' || value.startsWith('-') || values[key] !== undefined) return null;
      values[key] = value;
    } else if (a === '-i' || a === '--interactive') {
      if (interactive) return null;
      interactive = true;
    } else if (GLOBAL_FLAGS.has(a)) continue;
    else if (a.startsWith('-')) return null;
    else positional.push(a);
  }
  const { cluster, sa } = values;
  if (positional.join(' ') !== 'proxy kubectl' || !cluster || !sa) return null;
  if (values.output !== undefined && values.output !== 'text' && values.output !== 'json') return null;
  return {
    config: values.config ?? (env.OCM_LAB_CONFIG || undefined),
    cluster,
    sa,
    interactive,
    hubKubeconfig: values.hubKubeconfig,
    kubectlArgs: end < 0 ? [] : args.slice(end + 1),
  };
}
