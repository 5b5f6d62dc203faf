import { InvalidInputError } from '../errors.js';

/**
 * The machine ocm-lab runs on, as Go and the release downloads spell it (`linux/amd64`, `darwin/arm64`,
 * `windows/amd64`): what kubectl and kind are fetched for. `$OCM_LAB_HOST_PLATFORM` (os/arch) overrides
 * it for artifact planning, so the other platforms' plans can be checked on Linux.
 */
export interface HostPlatform {
  os: string;
  arch: string;
}

export const HOST_PLATFORM_ENV = 'OCM_LAB_HOST_PLATFORM';

/** The platforms ocm-lab plans downloads for (kubectl and kind publish each). */
export const HOST_PLATFORMS: readonly string[] = ['linux', 'darwin', 'windows'].flatMap((os) => ['amd64', 'arm64'].map((arch) => `${os}/${arch}`));

/** Go's GOOS of a Node.js platform name. */
function goOs(platform: string = process.platform): string {
  return platform === 'win32' ? 'windows' : platform;
}

/** Go's GOARCH of a Node.js architecture name (also what `docker info` reports as x86_64/aarch64). */
export function goArch(arch: string = process.arch): string {
  const names: Record<string, string> = { x64: 'amd64', x86_64: 'amd64', arm64: 'arm64', aarch64: 'arm64', ppc64: 'ppc64le', s390x: 's390x' };
  return names[arch] ?? arch;
}

/** This machine's platform, or `$OCM_LAB_HOST_PLATFORM`'s; a value that is not one of HOST_PLATFORMS is exit 2. */
export function hostPlatform(env: NodeJS.ProcessEnv = process.env): HostPlatform {
  const override = env[HOST_PLATFORM_ENV];
  if (override) {
    if (!HOST_PLATFORMS.includes(override)) {
      throw new InvalidInputError(`${HOST_PLATFORM_ENV}=${override}: not a platform ocm-lab plans for; use one of ${HOST_PLATFORMS.join(', ')}`, {
        hint: `set ${HOST_PLATFORM_ENV} to os/arch as Go spells them (e.g. darwin/arm64), or unset it`,
      });
    }
    const [os, arch] = override.split('/') as [string, string];
    return { os, arch };
  }
  return { os: goOs(), arch: goArch() };
}

export function platformName(p: HostPlatform): string {
  return `${p.os}/${p.arch}`;
}

/** A program's file name on `p`: `kubectl.exe` on Windows, `kubectl` elsewhere. */
export function executableName(name: string, p: HostPlatform = hostPlatform()): string {
  return p.os === 'windows' ? `${name}.exe` : name;
}
