import fs from 'node:fs/promises';
import path from 'node:path';
import { InvalidInputError } from '../errors.js';

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
}

export const NO_MIRRORS: Mirrors = { registries: {}, downloads: {}, digests: {} };

const SECTIONS = ['registries', 'downloads', 'digests'] as const;
const DIGEST = /^sha256:[0-9a-f]{64}$/;
/** A registry host as image references name it: a DNS name, optionally with a port. */
const HOST = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:\d{1,5})?$/i;
/** `[host/]path:tag`, without a digest (the digest is the value). */
const REFERENCE = /^[a-z0-9][-a-z0-9._/:]*:[\w][\w.-]{0,127}$/i;
const HINT = 'fix the file (its format is in docs/provisioning.md, "Mirrors"), or leave --mirrors / mirrors: / $OCM_LAB_MIRRORS out';

function httpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === 'https:' || u.protocol === 'http:') && !u.search && !u.hash;
  } catch {
    return false;
  }
}

function checkEntry(section: (typeof SECTIONS)[number], key: string, value: unknown): string | null {
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
      if (!httpUrl(key) && (!REFERENCE.test(key) || key.includes('@'))) {
        return `${at}: '${key}' is not an image reference name:tag (e.g. quay.io/org/image:v1.2.1) or a download URL`;
      }
      return DIGEST.test(value) ? null : `${at} = ${value}: must be sha256: followed by 64 lower-case hex digits`;
  }
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
      const problem = checkEntry(section as (typeof SECTIONS)[number], key, entry);
      if (problem) problems.push(problem);
      else out[section]![section === 'downloads' ? key.replace(/\/+$/, '') : key] = (entry as string).replace(/\/+$/, '');
    }
  }
  if (problems.length) fail(problems);
  return out as unknown as Mirrors;
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
  const mirrored = mirrors.registries[host] ?? (host === 'docker.io' ? mirrors.registries['registry-1.docker.io'] : undefined);
  if (mirrored) return mirrored;
  return `https://${host === 'docker.io' ? 'registry-1.docker.io' : host}`;
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

/** The digest an image must have: the mirrors file's for `reference` (`name:tag`), else the built-in pin. */
export function requiredDigest(mirrors: Mirrors, reference: string, builtIn?: string): string | undefined {
  return mirrors.digests[reference] ?? builtIn;
}
