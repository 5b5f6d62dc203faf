import type { Platform } from './platform.js';

const MEDIA_TYPES = {
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
} as const;

/** Everything a pull can use, best first (a registry answers with the first it has). */
export const MANIFEST_ACCEPT = [MEDIA_TYPES.ociIndex, MEDIA_TYPES.dockerList, MEDIA_TYPES.ociManifest, MEDIA_TYPES.dockerManifest].join(', ');

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  platform?: Partial<Platform>;
}

export type ParsedManifest = { kind: 'index'; manifests: Descriptor[] } | { kind: 'image'; config?: Descriptor; layers: Descriptor[] };

function descriptors(value: unknown, field: string, where: string): Descriptor[] {
  if (!Array.isArray(value)) throw new Error(`${where}: ${field} is not a list`);
  return value.map((d: Partial<Descriptor>, i) => {
    if (typeof d?.digest !== 'string' || typeof d.size !== 'number') throw new Error(`${where}: ${field}[${i}] has no digest and size`);
    return { mediaType: String(d.mediaType ?? ''), digest: d.digest, size: d.size, platform: d.platform };
  });
}

/**
 * An index (OCI index, Docker manifest list) or an image manifest (OCI, Docker v2 schema 2),
 * told apart by the body's mediaType, else the Content-Type, else which list it carries.
 * Throws a plain Error saying what is wrong; the caller names the registry.
 */
export function parseManifest(bytes: Buffer, contentType: string | null, where: string): ParsedManifest {
  let doc: { mediaType?: string; schemaVersion?: number; manifests?: unknown; config?: unknown; layers?: unknown };
  try {
    doc = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new Error(`${where}: the manifest is not JSON`);
  }
  const type = doc.mediaType ?? contentType?.split(';')[0]?.trim() ?? '';
  if (doc.schemaVersion !== 2) throw new Error(`${where}: manifest schema version ${doc.schemaVersion ?? '(none)'} (only schema 2 is read)`);
  const index = type === MEDIA_TYPES.ociIndex || type === MEDIA_TYPES.dockerList || (!type && doc.manifests !== undefined);
  if (index) return { kind: 'index', manifests: descriptors(doc.manifests, 'manifests', where) };
  const image = type === MEDIA_TYPES.ociManifest || type === MEDIA_TYPES.dockerManifest || (!type && doc.layers !== undefined);
  if (image) {
    const layers = descriptors(doc.layers, 'layers', where);
    return doc.config === undefined ? { kind: 'image', layers } : { kind: 'image', config: descriptors([doc.config], 'config', where)[0], layers };
  }
  throw new Error(`${where}: unknown manifest type ${JSON.stringify(type)}`);
}
