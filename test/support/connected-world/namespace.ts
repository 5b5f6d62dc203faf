import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';

/** Debian's system trust bundle (OpenSSL, curl, Go read it); inside the namespace it holds the test CA only. */
const SYSTEM_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

export interface Ran {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** stdout and stderr interleaved. */
  all: string;
}

/**
 * A private mount namespace held open by a sleeping process: /etc/hosts and the system CA bundle are bind-mounted
 * over inside it only (propagation private, so the host never sees the mounts). Commands enter it with nsenter.
 */
export interface MountNamespace {
  pid: number;
  run(file: string, args: readonly string[], opts: { env: NodeJS.ProcessEnv; timeout?: number; cwd?: string }): Promise<Ran>;
  close(): Promise<void>;
}

const holders = new Set<number>();
process.once('exit', () => {
  for (const pid of holders) process.kill(pid, 'SIGKILL');
});

export async function privateMountNamespace(opts: { hostsFile: string; caFile: string }): Promise<MountNamespace> {
  await fs.access(SYSTEM_BUNDLE).catch(() => {
    throw new Error(`${SYSTEM_BUNDLE} is missing: the fixture replaces Debian's system CA bundle inside its namespace`);
  });
  const script = 'set -e; mount --bind "$1" /etc/hosts; mount --bind "$2" "$3"; echo ready; exec sleep 2147483647';
  const holder = spawn('unshare', ['--mount', '--propagation', 'private', '--', 'sh', '-c', script, 'sh', opts.hostsFile, opts.caFile, SYSTEM_BUNDLE], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let printed = '';
  holder.stderr.on('data', (d: Buffer) => (printed += d.toString()));
  const exited = new Promise<void>((resolve) => holder.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    holder.stdout.on('data', (d: Buffer) => (d.toString().includes('ready') ? resolve() : undefined));
    void exited.then(() => reject(new Error(`unshare --mount (as root) could not set up the namespace: ${printed.trim() || `exit ${holder.exitCode}`}`)));
  });
  const pid = holder.pid as number;
  holders.add(pid);
  return {
    pid,
    async run(file, args, runOpts) {
      const r = await execa('nsenter', [`--mount=/proc/${pid}/ns/mnt`, '--', file, ...args], {
        env: runOpts.env,
        extendEnv: false,
        reject: false,
        all: true,
        timeout: runOpts.timeout,
        cwd: runOpts.cwd,
      });
      return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr), all: String(r.all) };
    },
    async close() {
      if (holder.exitCode === null && holder.signalCode === null) holder.kill('SIGKILL');
      await exited;
      holders.delete(pid);
    },
  };
}

/** PATH with every directory that holds a `go` removed; throws when one of those is a system directory (it cannot go). */
export async function pathWithoutGo(pathValue: string = process.env.PATH ?? ''): Promise<string> {
  const kept: string[] = [];
  for (const dir of pathValue.split(path.delimiter).filter(Boolean)) {
    const hasGo = await fs.access(path.join(dir, 'go')).then(
      () => true,
      () => false,
    );
    if (!hasGo) kept.push(dir);
    else if (['/usr/bin', '/bin', '/usr/sbin', '/sbin'].includes(dir)) throw new Error(`go is in ${dir}: a PATH without Go cannot drop a system directory`);
  }
  return kept.join(path.delimiter);
}
