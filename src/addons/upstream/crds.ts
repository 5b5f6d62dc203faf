import fs from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import { ensureGoModuleSource } from '../../provision/index.js';
import { CLUSTER_PROXY_VERSION, MANAGED_SERVICEACCOUNT_VERSION } from '../../provision/recipes.js';
import { MissingPrerequisiteError } from '../../errors.js';
import type { KubeObject } from '../../kube/objects.js';
import type { UpstreamAddon } from './names.js';

/**
 * Where each upstream addon's CRDs live: its Helm chart's `crds/` folder in the
 * module zip the Go module proxy serves (never copied into this repository;
 * read from the module cache at install time).
 */
const UPSTREAM_CRD_SOURCES: Record<UpstreamAddon, { module: string; version: string; files: string[] }> = {
  'cluster-proxy': {
    module: 'open-cluster-management.io/cluster-proxy',
    version: CLUSTER_PROXY_VERSION,
    files: ['charts/cluster-proxy/crds/managedproxyconfigurations.yaml', 'charts/cluster-proxy/crds/managedproxyserviceresolvers.yaml'],
  },
  'managed-serviceaccount': {
    module: 'open-cluster-management.io/managed-serviceaccount',
    version: MANAGED_SERVICEACCOUNT_VERSION,
    files: ['charts/managed-serviceaccount/crds/authentication.open-cluster-management.io_managedserviceaccounts.yaml'],
  },
};

/** Every CustomResourceDefinition in a YAML stream (documents of other kinds and empty ones skipped). */
export function crdsInYaml(text: string, source: string): KubeObject[] {
  const out: KubeObject[] = [];
  for (const doc of YAML.parseAllDocuments(text)) {
    if (doc.errors.length) throw new Error(`${source}: not valid YAML: ${doc.errors[0]?.message ?? ''}`);
    const obj = doc.toJS() as KubeObject | null;
    if (obj?.kind === 'CustomResourceDefinition') out.push(obj);
  }
  return out;
}

/** The addon's CRDs as upstream publishes them at the pinned version (fetched into the Go module cache if missing). */
export async function upstreamAddonCrds(addon: UpstreamAddon, onProgress?: (line: string) => void): Promise<KubeObject[]> {
  const src = UPSTREAM_CRD_SOURCES[addon];
  const dir = await ensureGoModuleSource(src.module, src.version, { onProgress });
  const crds: KubeObject[] = [];
  for (const file of src.files) {
    const full = path.join(dir, file);
    const text = await fs.readFile(full, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new MissingPrerequisiteError(`${addon}'s CRDs: cannot read ${full} (${err.code ?? err.message}) in ${src.module}@${src.version}`, {
        hint: `check the Go module cache: go mod download -json ${src.module}@${src.version}`,
      });
    });
    crds.push(...crdsInYaml(text, full));
  }
  if (!crds.length)
    throw new MissingPrerequisiteError(`${addon}'s CRDs: no CustomResourceDefinition in ${src.files.join(', ')} of ${src.module}@${src.version}`);
  return crds;
}
