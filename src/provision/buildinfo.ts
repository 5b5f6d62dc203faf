import fs from 'node:fs/promises';

/**
 * The module versions a Go binary was built from, as `go version -m` shows
 * them, read from the binary itself: Go (≥ 1.18) embeds its module list as
 * text lines `mod\t<path>\t<version>\t<sum>` (the main module) and
 * `dep\t<path>\t<version>\t<sum>`, a dependency replaced by another one being
 * followed by a `=>\t…` line. Binaries that print no version of their own
 * (upstream addons built in a wrapper module) are verified this way.
 */
export function moduleVersionInBuildInfo(binary: Buffer, module: string): string | null {
  for (const kind of ['dep', 'mod']) {
    const needle = Buffer.from(`\n${kind}\t${module}\t`);
    const at = binary.indexOf(needle);
    if (at < 0) continue;
    const start = at + needle.length;
    const end = binary.indexOf(0x0a, start);
    const fields = binary
      .subarray(start, end < 0 ? undefined : end)
      .toString('latin1')
      .split('\t');
    const next = end < 0 ? '' : binary.subarray(end + 1, end + 4).toString('latin1');
    // A replaced module is not the one the recipe names.
    if (next === '=>\t') return null;
    return fields[0] || null;
  }
  return null;
}

/** `{ ok, printed }` as reportsVersion answers: does the binary's build information name `module` at `version`? */
export async function buildInfoReportsVersion(file: string, module: string, version: string): Promise<{ ok: boolean; printed: string }> {
  const data = await fs.readFile(file).catch(() => null);
  if (!data) return { ok: false, printed: `cannot read ${file}` };
  const found = moduleVersionInBuildInfo(data, module);
  if (!found) return { ok: false, printed: `no Go build information naming ${module}` };
  return { ok: found === version, printed: `built from ${module} ${found}` };
}
