import { describe, expect, it } from 'vitest';
import { MissingPrerequisiteError } from '../../src/errors.js';
import { entryFromKindKubeconfig } from '../../src/runtime/kind/kubeconfigs.js';
import { parseMemAvailable, type HostFacts } from '../../src/host/facts.js';
import { hostProblems, MEMORY_PER_CLUSTER_BYTES, requireHostFits } from '../../src/runtime/kind/preflight.js';

/** The host facts (src/host/facts.ts) with the fields kind's preflight reads given flat. */
function host(f: { platform: string; maxUserWatches: number | null; maxUserInstances: number | null; memAvailableBytes: number | null }): HostFacts {
  return {
    platform: { os: f.platform, arch: 'amd64' },
    root: false,
    inotify: { maxUserWatches: f.maxUserWatches, maxUserInstances: f.maxUserInstances },
    memAvailableBytes: f.memAvailableBytes,
    hostCgroupVersion: '2',
    engine: null,
  };
}

const roomy = { platform: 'linux', maxUserWatches: 524288, maxUserInstances: 512, memAvailableBytes: 16 * 1024 ** 3 };

describe('kind preflight', () => {
  it('reads MemAvailable from /proc/meminfo', () => {
    expect(parseMemAvailable('MemTotal:       32871232 kB\nMemFree:         1000 kB\nMemAvailable:   24134956 kB\n')).toBe(24134956 * 1024);
    expect(parseMemAvailable('MemTotal: 1 kB\n')).toBeNull();
  });

  it('accepts a host with kind-sized limits', () => {
    expect(hostProblems(host(roomy), 3)).toEqual([]);
  });

  it('names the sysctl to run for each low inotify limit, and the memory shortfall', () => {
    const problems = hostProblems(host({ ...roomy, maxUserWatches: 192536, maxUserInstances: 128, memAvailableBytes: 2 * 1024 ** 3 }), 3);
    expect(problems.map((p) => p.fix)).toEqual([
      'sudo sysctl -w fs.inotify.max_user_watches=524288',
      'sudo sysctl -w fs.inotify.max_user_instances=512',
      expect.stringContaining('free memory'),
    ]);
    expect(problems[2]!.problem).toMatch(/2\.0 GiB of memory is available; 3 new kind clusters need about 4\.5 GiB/);
  });

  it('counts memory only for clusters still to create, and checks nothing off Linux', () => {
    const tight = { ...roomy, memAvailableBytes: MEMORY_PER_CLUSTER_BYTES * 1.2 };
    expect(hostProblems(host(tight), 1)).toEqual([]);
    expect(hostProblems(host(tight), 2)).toHaveLength(1);
    expect(hostProblems(host(tight), 0)).toEqual([]);
    expect(hostProblems(host({ ...tight, platform: 'darwin', maxUserWatches: null }), 5)).toEqual([]);
  });

  it('fails with exit 3 and every fix at once', () => {
    let err: unknown;
    try {
      requireHostFits(host({ ...roomy, maxUserWatches: 100, maxUserInstances: 100 }), 1);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MissingPrerequisiteError);
    expect((err as MissingPrerequisiteError).exitCode).toBe(3);
    expect((err as MissingPrerequisiteError).hint).toContain('max_user_watches=524288');
    expect((err as MissingPrerequisiteError).hint).toContain('max_user_instances=512');
  });
});

describe('kind kubeconfigs', () => {
  it("renames kind's context to the lab cluster's name and keeps the credentials", () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const text = [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- cluster:',
      `    certificate-authority-data: ${b64('CA PEM')}`,
      '    server: https://127.0.0.1:40123',
      '  name: kind-hb-hub',
      'contexts:',
      '- context:',
      '    cluster: kind-hb-hub',
      '    user: kind-hb-hub',
      '  name: kind-hb-hub',
      'current-context: kind-hb-hub',
      'users:',
      '- name: kind-hb-hub',
      '  user:',
      `    client-certificate-data: ${b64('CERT')}`,
      `    client-key-data: ${b64('KEY')}`,
    ].join('\n');
    expect(entryFromKindKubeconfig(text, 'hub')).toEqual({
      name: 'hub',
      server: 'https://127.0.0.1:40123',
      caPem: 'CA PEM',
      clientCertPem: 'CERT',
      clientKeyPem: 'KEY',
    });
    expect(() => entryFromKindKubeconfig('apiVersion: v1\nkind: Config\n', 'hub')).toThrow(/without a complete current context/);
  });
});

describe('kind failures', () => {
  it('keep the lines that say why, not the Go stack trace', async () => {
    const { kindFailureSummary } = await import('../../src/runtime/kind/kind-cli.js');
    const out = [
      'Creating cluster "hb-hub" ...',
      'ERROR: failed to create cluster: failed to init node with kubeadm: command "docker exec --privileged hb-hub-control-plane kubeadm init" failed with error: exit status 1',
      '[kubelet-check] The kubelet is not healthy after 4m0s',
      'k8s.io/kubernetes/cmd/kubeadm/app/cmd/phases/workflow.(*Runner).Run',
      '\tk8s.io/kubernetes@v1.34.4/cmd/kubeadm/app/cmd/phases/workflow/runner.go:234',
      'main.main',
      '\tk8s.io/kubernetes@v1.34.4/cmd/kubeadm/kubeadm.go:25',
    ].join('\n');
    const summary = kindFailureSummary(out);
    expect(summary).toContain('ERROR: failed to create cluster');
    expect(summary).not.toContain('runner.go');
    expect(summary).not.toContain('main.main');
  });
});
