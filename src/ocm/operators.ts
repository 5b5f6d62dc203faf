import path from 'node:path';
import YAML from 'yaml';
import { OCM_IMAGE_REPOSITORY, ocmImage } from '../image.js';
import type { KubeObject } from '../kube/objects.js';
import { ensureGoModuleSource } from '../provision/index.js';
import { run } from '../util/exec.js';

/** The Go module OCM's binaries are built from; its deploy/ folder holds the operators' kustomizations. */
export const OCM_MODULE = 'open-cluster-management.io/ocm';

export type OperatorName = 'cluster-manager' | 'klusterlet';

const OPERATOR_IMAGE = `${OCM_IMAGE_REPOSITORY}/registration-operator`;

/** Points every container of the operator Deployment at the lab's OCM version (upstream's kustomization says `latest`). */
export function pinOperatorImage(objects: KubeObject[], ocmVersion: string): KubeObject[] {
  return objects.map((obj) => {
    if (obj.kind !== 'Deployment') return obj;
    const spec = obj.spec as { template: { spec: { containers: { image?: string }[] } } };
    const containers = spec.template.spec.containers.map((c) =>
      c.image === OPERATOR_IMAGE || c.image?.startsWith(`${OPERATOR_IMAGE}:`) ? { ...c, image: ocmImage('registration-operator', ocmVersion) } : c,
    );
    return { ...obj, spec: { ...spec, template: { ...spec.template, spec: { ...spec.template.spec, containers } } } };
  });
}

/**
 * The operator's objects exactly as `kubectl apply -k deploy/<operator>/config`
 * would create them from the OCM module of the lab's version (its CRD, RBAC,
 * namespace, ServiceAccount and Deployment), fetched at install time through
 * the Go module proxy, rendered by kubectl's own kustomize.
 */
export async function operatorManifests(operator: OperatorName, options: { ocmVersion: string; kubectl: string; onProgress?: (line: string) => void }): Promise<KubeObject[]> {
  const moduleDir = await ensureGoModuleSource(OCM_MODULE, options.ocmVersion, { onProgress: options.onProgress });
  const { stdout } = await run(options.kubectl, ['kustomize', path.join(moduleDir, 'deploy', operator, 'config')]);
  const objects = YAML.parseAllDocuments(stdout)
    .map((doc) => doc.toJSON() as KubeObject | null)
    .filter((obj): obj is KubeObject => !!obj && typeof obj.kind === 'string');
  return pinOperatorImage(objects, options.ocmVersion);
}
