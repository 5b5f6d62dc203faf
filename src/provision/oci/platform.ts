/** An image's platform as an OCI index or Docker manifest list names it. */
export interface Platform {
  os: string;
  architecture: string;
  variant?: string;
}

/** linux and this machine's architecture as Go spells it; arm64 images are variant v8. */
export function hostPlatform(arch: string = process.arch): Platform {
  const architecture = ({ x64: 'amd64', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', ia32: '386' } as Record<string, string>)[arch] ?? arch;
  return architecture === 'arm64' ? { os: 'linux', architecture, variant: 'v8' } : { os: 'linux', architecture };
}

export function formatPlatform(p: Platform): string {
  return `${p.os}/${p.architecture}${p.variant ? `/${p.variant}` : ''}`;
}

/**
 * The entry of an index for `want`: same os and architecture, and the wanted variant or none
 * (arm64 images often omit v8); an exact variant wins. Attestation entries (`unknown/unknown`) never match.
 */
export function choosePlatform<D extends { platform?: Partial<Platform> }>(entries: readonly D[], want: Platform): D | undefined {
  const candidates = entries.filter((e) => e.platform?.os === want.os && e.platform?.architecture === want.architecture);
  if (want.variant) return candidates.find((e) => e.platform?.variant === want.variant) ?? candidates.find((e) => !e.platform?.variant);
  return candidates.find((e) => !e.platform?.variant) ?? candidates[0];
}
