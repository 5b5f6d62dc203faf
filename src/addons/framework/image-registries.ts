import type { KubeObject } from '../../kube/objects.js';
import { podTemplateOf } from './agent-config.js';

/** One registry rewrite: `source` prefix → `mirror` (AddOnDeploymentConfig `spec.registries`, the cluster annotation's `registries`). */
export interface ImageMirror {
  source?: string;
  mirror: string;
}

/** On a ManagedCluster: JSON `{"registries":[{"source":…,"mirror":…}]}` for every addon agent image on that cluster. */
export const CLUSTER_IMAGE_REGISTRIES_ANNOTATION = 'open-cluster-management.io/image-registries';

/**
 * An image through the registries: each entry whose source is a prefix of the image replaces
 * that prefix with its mirror; an entry without a source puts the image's last path segment
 * (name:tag) under the mirror. The last entry that changes the image wins, as upstream.
 */
export function overrideImage(registries: ImageMirror[] | undefined, image: string): string {
  let result = image;
  for (const r of registries ?? []) {
    const next = mirrorOne(r.source ?? '', r.mirror ?? '', image);
    if (next !== image) result = next;
  }
  return result;
}

function mirrorOne(source: string, mirror: string, image: string): string {
  source = source.replace(/\/$/, '');
  mirror = mirror.replace(/\/$/, '');
  if (!source) {
    const nameTag = image.split('/').pop() ?? image;
    return mirror ? `${mirror}/${nameTag}` : nameTag;
  }
  return image.startsWith(source) ? mirror + image.slice(source.length) : image;
}

/**
 * The registries a ManagedCluster's annotation asks for; a value that is not the JSON upstream
 * reads is a problem (as upstream, the agents are then left as they were).
 */
export function clusterImageRegistries(annotations: Record<string, string> | undefined): { registries: ImageMirror[] } | { problem: string } {
  const value = annotations?.[CLUSTER_IMAGE_REGISTRIES_ANNOTATION];
  if (!value) return { registries: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (err) {
    return { problem: `annotation ${CLUSTER_IMAGE_REGISTRIES_ANNOTATION} is not JSON (${(err as Error).message}): ${value}` };
  }
  const registries = (parsed as { registries?: unknown } | null)?.registries;
  if (registries === undefined || registries === null) return { registries: [] };
  if (!Array.isArray(registries) || registries.some((r) => typeof r !== 'object' || r === null || typeof (r as ImageMirror).mirror !== 'string')) {
    return { problem: `annotation ${CLUSTER_IMAGE_REGISTRIES_ANNOTATION}: registries must be a list of {"source": …, "mirror": …}: ${value}` };
  }
  return { registries: registries as ImageMirror[] };
}

/**
 * One agent image as upstream's framework picks it: the deployment config's registries when
 * they change the image, else the cluster annotation's.
 */
export function agentImage(image: string, fromConfig: ImageMirror[] | undefined, fromCluster: ImageMirror[]): string {
  const configured = overrideImage(fromConfig, image);
  return configured !== image ? configured : overrideImage(fromCluster, image);
}

/** The manifests with every container image of every pod template through agentImage; the input is left untouched. */
export function overrideAgentImages(manifests: KubeObject[], fromConfig: ImageMirror[] | undefined, fromCluster: ImageMirror[]): KubeObject[] {
  if (!fromConfig?.length && !fromCluster.length) return manifests;
  return manifests.map((original) => {
    if (!podTemplateOf(original)) return original;
    const obj = structuredClone(original);
    const pod = podTemplateOf(obj)!.template.spec ?? {};
    for (const c of [...(pod.initContainers ?? []), ...(pod.containers ?? [])]) {
      if (c.image) c.image = agentImage(c.image, fromConfig, fromCluster);
    }
    return obj;
  });
}
