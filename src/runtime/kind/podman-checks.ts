import { engineSharesHostKernel, type EngineFacts, type HostFacts } from '../../host/facts.js';
import type { PreflightCheck } from '../preflight.js';

/** kind's podman provider refuses an older podman (its `ensureMinVersion`; docs/notes.md, kind's podman provider). */
const KIND_MIN_PODMAN = '1.8.0';

/** `4.3.1`, `1.7.1-dev` → [major, minor, patch]; null when it does not start with three numbers. */
export function versionParts(version: string): [number, number, number] | null {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

function atLeast(version: [number, number, number], min: [number, number, number]): boolean {
  for (let i = 0; i < 3; i++) if (version[i] !== min[i]) return (version[i] as number) > (min[i] as number);
  return true;
}

/**
 * What a Podman engine must be for the lab's kind clusters, checked before anything is created (a stop is exit 3, the
 * preflight's "this platform cannot run the lab"): a podman kind's provider takes, rootful or on cgroup v2 (kind
 * refuses rootless on cgroup v1), and netavark (the lab's VPC networks are isolated by its `isolate` option). Pure.
 */
export function podmanChecks(engine: EngineFacts): PreflightCheck[] {
  const checks: PreflightCheck[] = [];
  const version = engine.version ?? '';
  const parts = versionParts(version);
  if (!parts || !atLeast(parts, versionParts(KIND_MIN_PODMAN) as [number, number, number])) {
    checks.push({
      check: 'podman version',
      level: 'stop',
      line: parts
        ? `podman ${version} is older than kind's podman provider takes (${KIND_MIN_PODMAN} or later)`
        : `podman says its version is '${version || 'nothing'}', not one kind's podman provider can compare with ${KIND_MIN_PODMAN}`,
      fix: `upgrade podman to ${KIND_MIN_PODMAN} or later (4.0 or later for the netavark network backend), or use Docker (OCM_LAB_ENGINE=docker)`,
    });
  }
  if (engine.rootless && engine.cgroupVersion === '1') {
    checks.push({
      check: 'podman rootless',
      level: 'stop',
      line: "Podman runs rootless on a cgroup v1 host, and kind's podman provider runs rootless only on cgroup v2",
      fix: 'run ocm-lab as root (sudo, rootful Podman), or boot the host with cgroup v2 (systemd.unified_cgroup_hierarchy=1)',
    });
  }
  if (engine.networkBackend !== undefined && engine.networkBackend !== 'netavark') {
    checks.push({
      check: 'podman network',
      level: 'stop',
      line:
        `Podman's network backend is ${engine.networkBackend}: ` +
        `the lab isolates its VPC networks with netavark's isolate option, which ${engine.networkBackend} lacks`,
      fix: 'switch Podman to netavark (network_backend = "netavark" in containers.conf, then podman system reset), or use Docker (OCM_LAB_ENGINE=docker)',
    });
  }
  if (!checks.length) {
    checks.push({
      check: 'podman',
      level: 'ok',
      line: `podman ${version}, ${engine.rootless ? 'rootless' : 'rootful'}, network backend ${engine.networkBackend ?? 'not said'}`,
    });
  }
  return checks;
}

/**
 * What a Podman on this machine needs of the machine: kind's podman provider bind-mounts /lib/modules into every node
 * (`--volume /lib/modules:/lib/modules:ro`, its provision.go), and Podman, unlike Docker, refuses a missing source
 * ("statfs /lib/modules: no such file or directory"). Some hosts have none: a kernel with no loadable modules, a VM or
 * sandbox whose kernel comes from outside. Only read where the engine runs this machine's kernel. Pure.
 */
export function podmanHostChecks(facts: HostFacts): PreflightCheck[] {
  if (facts.libModules !== false || !engineSharesHostKernel(facts)) return [];
  return [
    {
      check: 'podman /lib/modules',
      level: 'stop',
      line: "this host has no /lib/modules, which kind's podman provider mounts into every node (Podman refuses a missing mount source)",
      fix: 'create it, empty if the kernel has no modules (sudo mkdir -p /lib/modules), or use Docker (OCM_LAB_ENGINE=docker)',
    },
  ];
}
