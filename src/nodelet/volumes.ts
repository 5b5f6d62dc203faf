import path from 'node:path';
import { ContainerStartError } from './errors.js';
import { fieldValue, resourceFieldValue } from './fields.js';
import type { Container, DownwardAPIVolumeFile, KeyToPath, NodeFacts, ObjectSource, Pod, Volume } from './types.js';

/**
 * Where a pod's files live on the node. Volumes are materialised once per
 * pod under `volumes/<name>/`; each volumeMount of a container is a bind
 * mount of that directory (or its subPath) at the mountPath, made by the OCI
 * runtime in the container's own mount namespace.
 */
export function volumeDir(podDir: string, volume: string): string {
  return path.join(podDir, 'volumes', volume);
}

interface VolumeFile {
  /** Relative to the volume directory. */
  path: string;
  data: Buffer;
  mode: number;
}

/** Files of a volume, or a plain directory (emptyDir). */
export type RenderedVolume = { kind: 'files'; files: VolumeFile[] } | { kind: 'dir' };

export interface VolumeSources {
  node: NodeFacts;
  objects: ObjectSource;
  /** A ServiceAccount token for the pod (TokenRequest bound to the pod). */
  token(audience: string | undefined, expirationSeconds: number): Promise<string>;
}

const SUPPORTED_VOLUME_TYPES = ['secret', 'configMap', 'projected', 'downwardAPI', 'emptyDir'] as const;

// Secrets and tokens are credentials: owner-only. ConfigMaps and downward API data are not.
const SECRET_MODE = 0o600;
const PUBLIC_MODE = 0o644;

function checkRelative(volume: string, p: string): string {
  const norm = path.posix.normalize(p);
  if (!p || path.posix.isAbsolute(p) || norm === '..' || norm.startsWith('../')) {
    throw new ContainerStartError('CreateContainerConfigError', `volume ${volume}: path '${p}' must be relative and stay inside the volume`, false);
  }
  return norm;
}

function keyFiles(volume: string, data: Record<string, Buffer>, items: KeyToPath[] | undefined, what: string, optional: boolean, mode: number): VolumeFile[] {
  if (!items || items.length === 0) return Object.entries(data).map(([k, v]) => ({ path: checkRelative(volume, k), data: v, mode }));
  const files: VolumeFile[] = [];
  for (const item of items) {
    const value = data[item.key];
    if (value === undefined) {
      if (optional) continue;
      throw new ContainerStartError('CreateContainerConfigError', `volume ${volume}: couldn't find key ${item.key} in ${what}`);
    }
    files.push({ path: checkRelative(volume, item.path), data: value, mode });
  }
  return files;
}

async function secretData(sources: VolumeSources, ns: string, name: string): Promise<Record<string, Buffer> | null> {
  const s = await sources.objects.secret(ns, name);
  if (!s) return null;
  return Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
}

async function configMapData(sources: VolumeSources, ns: string, name: string): Promise<Record<string, Buffer> | null> {
  const cm = await sources.objects.configMap(ns, name);
  if (!cm) return null;
  return {
    ...Object.fromEntries(Object.entries(cm.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'utf8')])),
    ...Object.fromEntries(Object.entries(cm.binaryData ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  };
}

function downwardFiles(volume: string, pod: Pod, node: NodeFacts, items: DownwardAPIVolumeFile[] | undefined): VolumeFile[] {
  return (items ?? []).map((item) => {
    let value: string;
    if (item.fieldRef) value = fieldValue(pod, node, item.fieldRef);
    else if (item.resourceFieldRef) {
      const container = item.resourceFieldRef.containerName ?? '';
      value = resourceFieldValue(pod.spec.containers, container, node, item.resourceFieldRef);
    } else throw new ContainerStartError('CreateContainerConfigError', `volume ${volume}: downwardAPI item ${item.path} names no field`, false);
    return { path: checkRelative(volume, item.path), data: Buffer.from(value, 'utf8'), mode: PUBLIC_MODE };
  });
}

/** The files a volume holds for `pod`, read with the node's credentials. */
export async function renderVolume(pod: Pod, volume: Volume, sources: VolumeSources): Promise<RenderedVolume> {
  const ns = pod.metadata.namespace ?? 'default';
  const v = volume.name;
  if (volume.emptyDir) return { kind: 'dir' };
  if (volume.secret) {
    const name = volume.secret.secretName ?? '';
    const data = await secretData(sources, ns, name);
    if (!data) {
      if (volume.secret.optional) return { kind: 'files', files: [] };
      throw new ContainerStartError('CreateContainerConfigError', `volume ${v}: secret "${name}" not found`);
    }
    return { kind: 'files', files: keyFiles(v, data, volume.secret.items, `Secret ${ns}/${name}`, !!volume.secret.optional, SECRET_MODE) };
  }
  if (volume.configMap) {
    const name = volume.configMap.name ?? '';
    const data = await configMapData(sources, ns, name);
    if (!data) {
      if (volume.configMap.optional) return { kind: 'files', files: [] };
      throw new ContainerStartError('CreateContainerConfigError', `volume ${v}: configmap "${name}" not found`);
    }
    return { kind: 'files', files: keyFiles(v, data, volume.configMap.items, `ConfigMap ${ns}/${name}`, !!volume.configMap.optional, PUBLIC_MODE) };
  }
  if (volume.downwardAPI) return { kind: 'files', files: downwardFiles(v, pod, sources.node, volume.downwardAPI.items) };
  if (volume.projected) {
    const files: VolumeFile[] = [];
    for (const src of volume.projected.sources ?? []) {
      if (src.secret) {
        const name = src.secret.name ?? '';
        const data = await secretData(sources, ns, name);
        if (!data) {
          if (src.secret.optional) continue;
          throw new ContainerStartError('CreateContainerConfigError', `volume ${v}: secret "${name}" not found`);
        }
        files.push(...keyFiles(v, data, src.secret.items, `Secret ${ns}/${name}`, !!src.secret.optional, SECRET_MODE));
      } else if (src.configMap) {
        const name = src.configMap.name ?? '';
        const data = await configMapData(sources, ns, name);
        if (!data) {
          if (src.configMap.optional) continue;
          throw new ContainerStartError('CreateContainerConfigError', `volume ${v}: configmap "${name}" not found`);
        }
        files.push(...keyFiles(v, data, src.configMap.items, `ConfigMap ${ns}/${name}`, !!src.configMap.optional, PUBLIC_MODE));
      } else if (src.downwardAPI) {
        files.push(...downwardFiles(v, pod, sources.node, src.downwardAPI.items));
      } else if (src.serviceAccountToken) {
        const t = src.serviceAccountToken;
        const token = await sources.token(t.audience || undefined, t.expirationSeconds ?? 3607);
        files.push({ path: checkRelative(v, t.path), data: Buffer.from(token, 'utf8'), mode: SECRET_MODE });
      } else {
        throw new ContainerStartError(
          'CreateContainerConfigError',
          `volume ${v}: projected source ${Object.keys(src).join(',')} is not supported by the nodelet`,
          false,
        );
      }
    }
    return { kind: 'files', files };
  }
  const type = Object.keys(volume).filter((k) => k !== 'name')[0] ?? '(none)';
  throw new ContainerStartError(
    'CreateContainerConfigError',
    `volume ${v}: type ${type} is not supported by the nodelet (supported: ${SUPPORTED_VOLUME_TYPES.join(', ')})`,
    false,
  );
}

/** A volumeMount resolved to the host directory or file it binds. */
export interface VolumeBind {
  /** <podDir>/volumes/<volume>[/<subPath>] */
  source: string;
  /** The mountPath, normalised. */
  destination: string;
  readOnly: boolean;
  volume: string;
  subPath?: string;
}

/** The binds that stand for a container's volumeMounts, parents before children. */
export function volumeBinds(podDir: string, pod: Pod, container: Container): VolumeBind[] {
  const volumes = new Set((pod.spec.volumes ?? []).map((v) => v.name));
  const byPath = new Map<string, VolumeBind>();
  for (const m of container.volumeMounts ?? []) {
    if (!volumes.has(m.name)) {
      throw new ContainerStartError('CreateContainerConfigError', `container ${container.name}: volumeMount ${m.name} names no volume of the pod`, false);
    }
    const destination = path.posix.normalize(m.mountPath).replace(/(.)\/+$/, '$1');
    if (!path.posix.isAbsolute(destination) || destination === '/') {
      throw new ContainerStartError(
        'CreateContainerConfigError',
        `container ${container.name}: mountPath '${m.mountPath}' must be an absolute path below /`,
        false,
      );
    }
    if (byPath.has(destination)) {
      throw new ContainerStartError('CreateContainerConfigError', `container ${container.name}: mountPath ${destination} is used twice`, false);
    }
    const sub = m.subPath ? checkRelative(m.name, m.subPath) : '';
    byPath.set(destination, {
      source: path.join(volumeDir(podDir, m.name), sub),
      destination,
      readOnly: !!m.readOnly,
      volume: m.name,
      ...(sub ? { subPath: sub } : {}),
    });
  }
  return [...byPath.values()].sort((a, b) => a.destination.split('/').length - b.destination.split('/').length);
}
