export interface PortForwardTarget {
  kubectl: string;
  kubeconfig: string;
  /** Default: the kubeconfig's current context. */
  context?: string;
  namespace: string;
  /** What kubectl port-forwards to: `pod/<name>`, `svc/<name>`, `deployment/<name>`. */
  target: string;
  port: number;
  timeoutMs?: number;
}

export interface PortForward {
  /** `127.0.0.1:<port>`, where kubectl listens. */
  address: string;
  localPort: number;
  stop: () => Promise<void>;
}

/**
 * `kubectl port-forward --address 127.0.0.1 <target> :<port>` on a free local
 * port, through the API server (as clusteradm reaches the proxy-server): resolves
 * once kubectl says where it listens; `stop` ends kubectl.
 */
export async function kubectlPortForward(t: PortForwardTarget): Promise<PortForward> {
  const args = [
    '--kubeconfig',
    t.kubeconfig,
    ...(t.context ? ['--context', t.context] : []),
    '-n',
    t.namespace,
    'port-forward',
    '--address',
    '127.0.0.1',
    t.target,
    `:${t.port}`,
  ];
  const { execa } = await import('execa');
  const child = execa(t.kubectl, args, { reject: false, stdin: 'ignore' });
  const stop = async () => {
    child.kill('SIGTERM');
    await child;
  };
  const timeoutMs = t.timeoutMs ?? 30_000;
  try {
    const localPort = await new Promise<number>((resolve, reject) => {
      let seen = '';
      const timer = setTimeout(
        () => reject(new Error(`kubectl ${args.join(' ')} printed no forwarding line within ${timeoutMs / 1000} s; it printed: ${seen.trim() || '(nothing)'}`)),
        timeoutMs,
      );
      child.stdout?.on('data', (d: Buffer) => {
        seen += d.toString();
        const m = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(seen);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
      void child.then((r) => {
        clearTimeout(timer);
        reject(new Error(`kubectl ${args.join(' ')} ended (exit ${r.exitCode}): ${String(r.stderr).trim() || String(r.stdout).trim()}`));
      });
    });
    return { address: `127.0.0.1:${localPort}`, localPort, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
