import fs from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import { cacheDir } from '../paths.js';
import { writeFileAtomic } from '../util/atomic-file.js';
import { OCM_IMAGE_REPOSITORY, ocmImage } from '../images/catalogue.js';
import type { KubeObject } from '../kube/objects.js';
import { ensureBinaries, ensureGoModuleSource, type ArtifactsMode, type Mirrors } from '../provision/index.js';
import { run } from '../util/exec.js';

/** The Go module OCM's binaries are built from; its deploy/ folder holds the operators' kustomizations. */
const OCM_MODULE = 'open-cluster-management.io/ocm';

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

interface RenderOptions {
  ocmVersion: string;
  kubectl: string;
  /** Where the module proxy is, when Go is not there to fetch OCM's module (docs/provisioning.md, "Mirrors"). */
  mirrors?: Mirrors;
  onProgress?: (line: string) => void;
}

/**
 * The operator's objects exactly as `kubectl apply -k deploy/<operator>/config`
 * would create them from the OCM module of the lab's version (its CRD, RBAC,
 * namespace, ServiceAccount and Deployment), fetched at install time through
 * the Go module proxy (by Go, or without it: src/provision/gomod/), rendered by kubectl's own kustomize.
 */
export async function operatorManifests(operator: OperatorName, options: RenderOptions): Promise<KubeObject[]> {
  const objects = YAML.parseAllDocuments(await renderedOperator(operator, options))
    .map((doc) => doc.toJSON() as KubeObject | null)
    .filter((obj): obj is KubeObject => !!obj && typeof obj.kind === 'string');
  return pinOperatorImage(objects, options.ocmVersion);
}

/**
 * kubectl kustomize's output for one operator of one OCM version, kept in the
 * cache: a release's kustomization never changes, and a warm `up` then needs
 * neither Go nor the module proxy.
 */
async function renderedOperator(operator: OperatorName, options: RenderOptions): Promise<string> {
  const file = path.join(cacheDir(), 'ocm-operators', options.ocmVersion, `${operator}.yaml`);
  const cached = await fs.readFile(file, 'utf8').catch(() => null);
  if (cached) return cached;
  const moduleDir = await ensureGoModuleSource(OCM_MODULE, options.ocmVersion, { onProgress: options.onProgress, mirrors: options.mirrors });
  const { stdout } = await run(options.kubectl, ['kustomize', path.join(moduleDir, 'deploy', operator, 'config')]);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await writeFileAtomic(file, stdout, 0o644);
  return stdout;
}

export interface LabOperatorsOptions {
  ocmVersion: string;
  kubernetesVersion: string;
  binDir?: string;
  artifacts?: ArtifactsMode;
  mirrors?: Mirrors;
  onProgress?: (line: string) => void;
}

/** Both operators of the lab's OCM version, rendered with the lab's kubectl (provisioned if need be). */
export async function labOperators(options: LabOperatorsOptions): Promise<Record<OperatorName, KubeObject[]>> {
  const { kubectl } = await ensureBinaries(['kubectl'], {
    binDir: options.binDir,
    artifacts: options.artifacts,
    mirrors: options.mirrors,
    kubernetesVersion: options.kubernetesVersion,
    onProgress: options.onProgress,
  });
  if (!kubectl) throw new Error('internal: kubectl was not provisioned');
  const render = { ocmVersion: options.ocmVersion, kubectl, mirrors: options.mirrors, onProgress: options.onProgress };
  const [clusterManager, klusterlet] = await Promise.all([operatorManifests('cluster-manager', render), operatorManifests('klusterlet', render)]);
  return { 'cluster-manager': clusterManager, klusterlet };
}
