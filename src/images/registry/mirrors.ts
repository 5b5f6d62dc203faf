import { docker } from '../docker.js';
import { registryInClusterHost } from './names.js';
import { DOCKER_HUB, parseReference, registryEndpoint } from '../../provision/oci/reference.js';

/** The directory containerd reads hosts.toml from (config_path: the kind configs patch it into every node's containerd config, kind-configs/). */
const CERTS_D = '/etc/containerd/certs.d';
/** Marks the directories we write, so a rewrite removes our stale ones (an old port) and nothing else. */
const OURS = '.ocm-lab';

function hostBlock(): string {
  return `[host."http://${registryInClusterHost()}"]\n  capabilities = ["pull", "resolve"]\n`;
}

/**
 * hosts.toml per registry host, as containerd in a kind node reads them:
 * `localhost:<port>` (what you push to) and the registry's own name lead to the
 * registry; each upstream domain of the lab's images (docker.io for ocm-lab:<version>,
 * quay.io for OCM's) has the registry as a mirror first and upstream as the
 * fallback, so an image the registry lacks is still pulled as before.
 */
export function registryHostsFiles(hostPort: number, labImages: readonly string[]): Record<string, string> {
  const files: Record<string, string> = {
    [`localhost:${hostPort}`]: `# ocm-lab: the lab's image registry, as pushed to on your machine\n${hostBlock()}`,
    [registryInClusterHost()]: `# ocm-lab: the lab's image registry by its name on the VPC networks\nserver = "http://${registryInClusterHost()}"\n`,
  };
  // docker.io always: images a user pushes (`ocm-lab registry push my-addon:dev`) run by their own names.
  for (const host of [...new Set([DOCKER_HUB, ...labImages.map((i) => parseReference(i).host)])].sort()) {
    files[host] = `# ocm-lab: the lab's images from its registry first, then upstream\nserver = "https://${registryEndpoint(host)}"\n\n${hostBlock()}`;
  }
  return files;
}

/** One shell script that replaces our hosts.toml directories in a node (containerd reads them at each pull: no restart). */
export function writeHostsScript(files: Record<string, string>, dir: string = CERTS_D): string {
  const lines = ['set -eu', `mkdir -p ${dir}`, `for d in ${dir}/*/; do if [ -f "$d${OURS}" ]; then rm -rf "$d"; fi; done`];
  for (const [host, text] of Object.entries(files)) {
    const hostDir = `${dir}/${host}`;
    lines.push(`mkdir -p '${hostDir}'`, `printf '%s' '${text.replace(/'/g, `'\\''`)}' > '${hostDir}/hosts.toml'`, `touch '${hostDir}/${OURS}'`);
  }
  return lines.join('\n');
}

export async function writeNodeRegistryHosts(node: string, files: Record<string, string>): Promise<void> {
  await docker(['exec', '-i', node, 'sh'], { input: writeHostsScript(files) });
}
