import type { NetworkSpec } from './types.js';

/** `network create` as both CLIs spell it: a bridge, the spec's subnet, gateway and labels; `options` are the engine's own `--opt`s. */
export function networkCreateArgs(spec: NetworkSpec, options: readonly string[] = []): string[] {
  const args = ['network', 'create', '--driver', 'bridge', ...options.flatMap((o) => ['--opt', o])];
  if (spec.subnet) args.push('--subnet', spec.subnet);
  if (spec.gateway) args.push('--gateway', spec.gateway);
  for (const [k, v] of Object.entries(spec.labels)) args.push('--label', `${k}=${v}`);
  args.push(spec.name);
  return args;
}
