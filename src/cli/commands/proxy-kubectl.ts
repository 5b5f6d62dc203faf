import readline from 'node:readline';
import os from 'node:os';
import { hubClientFor } from '../../addons/hub-client.js';
import { hubTunnelOptions } from '../../lab/hub-tunnel-options.js';
import { openProxySession, runKubectl, withInterrupts, splitCommandLine, type ProxySession } from '../../addons/proxy-kubectl.js';
import { loadLabConfig } from '../../config/load.js';
import { InvalidInputError } from '../../errors.js';
import { ensureBinaries } from '../../provision/resolve.js';
import type { ProxyKubectlOptions } from '../argv.js';

async function interactive(kubectl: string, session: ProxySession, interrupt: AbortSignal): Promise<void> {
  process.stdout.write('Please enter the kubectl command and use "exit" to quit the interactive mode\n');
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout, prompt: 'kubectl> ', terminal: process.stdin.isTTY });
  interrupt.addEventListener('abort', () => rl.close(), { once: true });
  // Input that ends while kubectl runs (a pipe) closes the interface; Node ≥ 22 throws on a prompt after that.
  let closed = false;
  rl.on('close', () => (closed = true));
  rl.prompt();
  for await (const line of rl) {
    const trimmed = line.trim();
    if (trimmed === 'exit' || trimmed === 'quit') break;
    if (trimmed) {
      session.dialAhead();
      try {
        await runKubectl(kubectl, session, splitCommandLine(trimmed), interrupt);
        if (interrupt.aborted) break;
      } catch (err) {
        process.stderr.write(`error: ${(err as Error).message}\n`);
      }
    }
    if (!closed) rl.prompt();
  }
  rl.close();
}

/**
 * `ocm-lab proxy kubectl`: kubectl against a managed cluster through cluster-proxy with a
 * ManagedServiceAccount's token. Reached from yargs (commands/proxy.ts) or, for the common
 * invocations, straight from main.ts before yargs loads (cli/argv.ts).
 */
export async function proxyKubectl(o: ProxyKubectlOptions): Promise<void> {
  const args = o.kubectlArgs;
  if (!o.interactive && args.length === 0)
    throw new InvalidInputError('give kubectl arguments after --, or -i for a prompt', {
      hint: 'e.g. ocm-lab proxy kubectl --cluster cluster1 --sa dep -- get deployments -A',
    });
  if (o.interactive && args.length) throw new InvalidInputError('-i takes no kubectl arguments after --; type them at the prompt');
  const config = await loadLabConfig(o.config);
  // The pinned kubectl (a stat when warm) is looked up while the hub client reads its kubeconfig.
  const [{ kubectl }, hub, reach] = await Promise.all([
    ensureBinaries(['kubectl'], { kubernetesVersion: config.kubernetesVersion }),
    hubClientFor(config, o.hubKubeconfig),
    hubTunnelOptions(config, o.hubKubeconfig),
  ]);
  // A Ctrl-C or SIGTERM ends kubectl, not us: the temporary kubeconfig with the token is always removed.
  const signal = await withInterrupts(async (interrupt) => {
    const dialError = (err: Error) => process.stderr.write(`ocm-lab: no connection to ${o.cluster}'s API server through cluster-proxy: ${err.message}\n`);
    const session = await openProxySession(hub, o.cluster, o.sa, reach, dialError).finally(() => hub.close());
    try {
      if (interrupt.aborted) return;
      if (o.interactive) await interactive(kubectl, session, interrupt);
      else {
        const code = await runKubectl(kubectl, session, args, interrupt);
        if (code !== 0) process.exitCode = code;
      }
    } finally {
      await session.close();
    }
  });
  if (signal) process.exitCode = 128 + (os.constants.signals[signal] ?? 0);
}
