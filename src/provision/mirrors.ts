import fs from 'node:fs/promises';
import path from 'node:path';
import { InvalidInputError } from '../errors.js';
import { DIGEST, namesTag, parseReference, registryEndpoint } from './oci/reference.js';
import { OCM_MODULE, OCM_SOURCE_ARCHIVE_SHA256 } from './versions.js';

/**
 * Where official artifacts are fetched from when not from their publishers, and the digests to require:
 * a YAML file named by `--mirrors FILE`, the lab file's `mirrors:` or $OCM_LAB_MIRRORS (docs/provisioning.md).
 */
export interface Mirrors {
  /** Registry host -> base URL that answers the distribution API for it. */
  registries: Readonly<Record<string, string>>;
  /** URL prefix -> replacement prefix (the same layout below it). */
  downloads: Readonly<Record<string, string>>;
  /**
   * Image reference (`name:tag`) -> the digest to require instead of the built-in pin; also a release
   * download's URL (as published, before `downloads:` rewrites it) -> its sha256 (kind's binaries are pinned).
   */
  digests: Readonly<Record<string, string>>;
  /**
   * `<module>@<version>` -> a source archive of that module version, for the built path where the Go module
   * proxy does not serve it (source-tree.ts). Absent in mirrors made before the section existed: none.
   */
  sources?: Readonly<Record<string, SourceArchive>>;
}

/** A .tar.gz of a Go module's tree at one version (its go.mod at the top or under one directory), held to a sha256. */
export interface SourceArchive {
  /** Absolute path. */
  file: string;
  /** 64 lower-case hex digits: the mirrors file's, else ocm-lab's pin (versions.ts OCM_SOURCE_ARCHIVE_SHA256). */
  sha256: string;
  /** Who named it, for messages: `--ocm-source`, `$OCM_LAB_OCM_SOURCE`, `ocmSource: in <lab file>`, `sources: in <mirrors file>`. */
  from: string;
}

export const NO_MIRRORS: Mirrors = { registries: {}, downloads: {}, digests: {}, sources: {} };

const SECTIONS = ['registries', 'downloads', 'digests', 'sources'] as const;
type MapSection = Exclude<(typeof SECTIONS)[number], 'sources'>;
const SHA256_HEX = /^(?:sha256:)?([0-9a-f]{64})$/;
/** `<module path>@<version>` as go.mod spells them (`open-cluster-management.io/ocm@v1.3.1`). */
const MODULE_AT_VERSION = /^[a-z0-9][-a-z0-9._~]*(\/[-\w.~+]+)*@v\d+\.\d+\.\d+([-+][\w.+-]*)?$/i;
/** A registry host as image references name it: a DNS name, optionally with a port. */
const HOST = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:\d{1,5})?$/i;
const HINT = 'fix the file (its format is in docs/provisioning.md, "Mirrors"), or leave --mirrors / mirrors: / $OCM_LAB_MIRRORS out';

function httpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === 'https:' || u.protocol === 'http:') && !u.search && !u.hash;
  } catch {
    return false;
  }
}

/** A `digests:` key naming an image: `[host/]path:tag` with its own tag and without a digest (the digest is the value). */
function isTaggedName(key: string): boolean {
  try {
    return namesTag(key) && parseReference(key).digest === undefined;
  } catch {
    return false;
  }
}

function checkEntry(section: MapSection, key: string, value: unknown): string | null {
  const at = `${section}.${key}`;
  if (typeof value !== 'string') return `${at}: must be a string`;
  switch (section) {
    case 'registries':
      if (!HOST.test(key)) return `${at}: '${key}' is not a registry host (e.g. quay.io or registry-1.docker.io)`;
      return httpUrl(value) ? null : `${at} = ${value}: must be an http(s) URL such as https://mirror.example.com:5000`;
    case 'downloads':
      if (!httpUrl(key)) return `${at}: '${key}' is not an http(s) URL prefix such as https://dl.k8s.io`;
      return httpUrl(value) ? null : `${at} = ${value}: must be an http(s) URL prefix such as https://mirror.example.com/k8s`;
    case 'digests':
      if (!httpUrl(key) && !isTaggedName(key)) {
        return `${at}: '${key}' is not an image reference name:tag (e.g. quay.io/org/image:v1.2.1) or a download URL`;
      }
      return DIGEST.test(value) ? null : `${at} = ${value}: must be sha256: followed by 64 lower-case hex digits`;
  }
}

/** The pinned sha256 of a module version's source archive, if ocm-lab pins one (OCM's releases only). */
export function pinnedSourceSha256(module: string, version: string): string | undefined {
  return module === OCM_MODULE ? OCM_SOURCE_ARCHIVE_SHA256[version] : undefined;
}

/** One `sources:` entry: `<module>@<version>: {file: PATH, sha256: HEX}` (sha256 may be left out where ocm-lab pins one). */
function checkSource(key: string, value: unknown, mirrorsFile: string): { problems: string[]; archive?: SourceArchive } {
  const at = `sources.${key}`;
  if (!MODULE_AT_VERSION.test(key)) return { problems: [`${at}: '${key}' is not <module>@<version> (e.g. open-cluster-management.io/ocm@v1.3.1)`] };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { problems: [`${at}: must be a mapping with file (the .tar.gz) and sha256 (its 64 hex digits)`] };
  }
  const problems: string[] = [];
  const entry = value as Record<string, unknown>;
  for (const field of Object.keys(entry))
    if (field !== 'file' && field !== 'sha256') problems.push(`${at}.${field}: unknown field; the fields are file, sha256`);
  if (typeof entry.file !== 'string' || !entry.file) problems.push(`${at}.file: must name the source archive (a .tar.gz file)`);
  const [module, version] = [key.slice(0, key.lastIndexOf('@')), key.slice(key.lastIndexOf('@') + 1)];
  let sha256 = pinnedSourceSha256(module, version);
  if (entry.sha256 !== undefined) {
    const m = typeof entry.sha256 === 'string' ? SHA256_HEX.exec(entry.sha256) : null;
    if (!m) problems.push(`${at}.sha256 = ${String(entry.sha256)}: must be 64 lower-case hex digits (sha256sum's), optionally after sha256:`);
    else sha256 = m[1];
  } else if (!sha256) problems.push(`${at}.sha256: is required: ocm-lab pins no digest for ${key}'s source (write what sha256sum prints for the file)`);
  if (problems.length || !sha256) return { problems };
  const file = path.resolve(path.dirname(mirrorsFile), entry.file as string);
  return { problems, archive: { file, sha256, from: `sources: in ${mirrorsFile}` } };
}

/** Validates the parsed YAML of a mirrors file; every problem names its field. */
export function parseMirrors(raw: unknown, source: string): Mirrors {
  const fail = (problems: string[]): never => {
    throw new InvalidInputError(`invalid mirrors file ${source} (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n  ${problems.join('\n  ')}`, {
      hint: HINT,
    });
  };
  if (raw === null || raw === undefined) return NO_MIRRORS;
  if (typeof raw !== 'object' || Array.isArray(raw)) fail([`the file must be a mapping with ${SECTIONS.join(', ')}`]);
  const problems: string[] = [];
  const out: Record<string, Record<string, string>> = { registries: {}, downloads: {}, digests: {} };
  const sources: Record<string, SourceArchive> = {};
  for (const [section, value] of Object.entries(raw as Record<string, unknown>)) {
    if (!(SECTIONS as readonly string[]).includes(section)) {
      problems.push(`${section}: unknown field; the fields are ${SECTIONS.join(', ')}`);
      continue;
    }
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) {
      problems.push(`${section}: must be a mapping ('key: value' lines indented under it)`);
      continue;
    }
    for (const [key, entry] of Object.entries(value as Record<string, unknown>)) {
      if (section === 'sources') {
        const checked = checkSource(key, entry, source);
        problems.push(...checked.problems);
        if (checked.archive) sources[key] = checked.archive;
        continue;
      }
      const problem = checkEntry(section as MapSection, key, entry);
      if (problem) problems.push(problem);
      else out[section]![section === 'downloads' ? key.replace(/\/+$/, '') : key] = (entry as string).replace(/\/+$/, '');
    }
  }
  if (problems.length) fail(problems);
  return { ...(out as unknown as Omit<Mirrors, 'sources'>), sources };
}

/** The mirrors file named by `file`, else $OCM_LAB_MIRRORS, else none. Throws InvalidInputError (exit 2) naming the file and field. */
export async function loadMirrors(file: string | undefined = process.env.OCM_LAB_MIRRORS || undefined): Promise<Mirrors> {
  if (!file) return NO_MIRRORS;
  const absolute = path.resolve(file);
  let text: string;
  try {
    text = await fs.readFile(absolute, 'utf8');
  } catch (err) {
    throw new InvalidInputError(`cannot read mirrors file ${absolute}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, {
      hint: HINT,
      cause: err,
    });
  }
  const YAML = (await import('yaml')).default;
  let raw: unknown;
  try {
    raw = YAML.parse(text);
  } catch (err) {
    throw new InvalidInputError(`invalid mirrors file ${absolute}: not YAML: ${(err as Error).message.split('\n')[0]}`, { hint: HINT, cause: err });
  }
  return parseMirrors(raw, absolute);
}

/** The base URL of the distribution API for `host`: the mirror's, else the host itself (Docker Hub's API lives at registry-1.docker.io). */
export function registryBase(mirrors: Mirrors, host: string): string {
  return mirrors.registries[host] ?? mirrors.registries[registryEndpoint(host)] ?? `https://${registryEndpoint(host)}`;
}

/** `url` with the longest matching `downloads:` prefix replaced (a prefix matches whole path segments only). */
export function downloadUrl(mirrors: Mirrors, url: string): string {
  let best: string | undefined;
  for (const prefix of Object.keys(mirrors.downloads)) {
    const matches = url === prefix || url.startsWith(`${prefix}/`);
    if (matches && (best === undefined || prefix.length > best.length)) best = prefix;
  }
  return best === undefined ? url : `${mirrors.downloads[best]}${url.slice(best.length)}`;
}

/**
 * The source archive to build `module@version` from instead of asking the Go module proxy: the mirrors' `sources:`
 * entry (where `--ocm-source`/`ocmSource:` also land, see withOcmSource), else for an OCM release ocm-lab pins a
 * source digest for, `$OCM_LAB_OCM_SOURCE` (so labs made without the CLI, e.g. the tests', find it too).
 */
export function sourceArchiveFor(mirrors: Mirrors, module: string, version: string, env: NodeJS.ProcessEnv = process.env): SourceArchive | undefined {
  const named = mirrors.sources?.[`${module}@${version}`];
  if (named) return named;
  const pinned = pinnedSourceSha256(module, version);
  const file = env.OCM_LAB_OCM_SOURCE;
  return pinned && file ? { file: path.resolve(file), sha256: pinned, from: '$OCM_LAB_OCM_SOURCE' } : undefined;
}

/**
 * `mirrors` with `file` as the source archive of OCM `version` (what `--ocm-source`, $OCM_LAB_OCM_SOURCE and the lab
 * file's `ocmSource:` name), held to ocm-lab's pin, else to the sha256 of a `sources:` entry for that version.
 * Exit 2 naming `from` when neither exists; `optional` (the environment variable, which CI sets for every lab)
 * leaves `mirrors` as they are instead.
 */
export function withOcmSource(mirrors: Mirrors, version: string, file: string, from: string, optional = false): Mirrors {
  const key = `${OCM_MODULE}@${version}`;
  const sha256 = pinnedSourceSha256(OCM_MODULE, version) ?? mirrors.sources?.[key]?.sha256;
  if (!sha256) {
    if (optional) return mirrors;
    const pinned = Object.keys(OCM_SOURCE_ARCHIVE_SHA256).join(', ');
    throw new InvalidInputError(`${from} ${file}: ocm-lab pins no source archive digest for OCM ${version} (it pins ${pinned})`, {
      hint:
        `build OCM ${version} from the Go module proxy (leave ${from} out), ` +
        'or name the archive with its sha256 under sources: in a mirrors file (docs/provisioning.md, "Mirrors")',
    });
  }
  return { ...mirrors, sources: { ...mirrors.sources, [key]: { file: path.resolve(file), sha256, from } } };
}

/** The digest an image must have: the mirrors file's for `reference` (`name:tag`), else the built-in pin. */
export function requiredDigest(mirrors: Mirrors, reference: string, builtIn?: string): string | undefined {
  return mirrors.digests[reference] ?? builtIn;
}
