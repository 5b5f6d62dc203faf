import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import { MissingPrerequisiteError } from '../errors.js';
import { FIELD_MANAGER } from './constants.js';
import { rawRequest, readOrNull, waitUntil, type KubeClients } from './kube.js';

/** The OCM API module whose CRD YAML is installed (the version OCM v1.2.1 requires). */
export const OCM_API_MODULE = 'open-cluster-management.io/api';
export const OCM_API_VERSION = 'v1.2.0';

/**
 * CRD files of the API module (relative paths) that the hub needs: the same
 * set upstream's cluster manager installs, minus ClusterProfile (feature-gated
 * off, and not part of the API module).
 */
export const HUB_CRD_FILES = [
  'cluster/v1/0000_00_clusters.open-cluster-management.io_managedclusters.crd.yaml',
  'cluster/v1beta2/0000_00_clusters.open-cluster-management.io_managedclustersets.crd.yaml',
  'cluster/v1beta2/0000_01_clusters.open-cluster-management.io_managedclustersetbindings.crd.yaml',
  'cluster/v1beta1/0000_02_clusters.open-cluster-management.io_placements.crd.yaml',
  'cluster/v1beta1/0000_03_clusters.open-cluster-management.io_placementdecisions.crd.yaml',
  'cluster/v1alpha1/0000_05_clusters.open-cluster-management.io_addonplacementscores.crd.yaml',
  'work/v1/0000_00_work.open-cluster-management.io_manifestworks.crd.yaml',
  'work/v1alpha1/0000_00_work.open-cluster-management.io_manifestworkreplicasets.crd.yaml',
  // The v1beta1 folder holds the addon CRDs that serve both v1alpha1 (stored) and v1beta1.
  'addon/v1beta1/0000_00_addon.open-cluster-management.io_clustermanagementaddons.crd.yaml',
  'addon/v1beta1/0000_01_addon.open-cluster-management.io_managedclusteraddons.crd.yaml',
  'addon/v1beta1/0000_02_addon.open-cluster-management.io_addondeploymentconfigs.crd.yaml',
  'addon/v1alpha1/0000_03_addon.open-cluster-management.io_addontemplates.crd.yaml',
] as const;

/** What the klusterlet needs on its own cluster. */
export const SPOKE_CRD_FILES = [
  'work/v1/0000_01_work.open-cluster-management.io_appliedmanifestworks.crd.yaml',
  'cluster/v1alpha1/0000_02_clusters.open-cluster-management.io_clusterclaims.crd.yaml',
] as const;

/** The two CRDs that store v1alpha1 and serve v1beta1 through the addon conversion webhook. */
export const ADDON_CONVERSION_CRDS = ['clustermanagementaddons.addon.open-cluster-management.io', 'managedclusteraddons.addon.open-cluster-management.io'];

const HASH_ANNOTATION = 'ocm-lab.io/applied-hash';

export interface Crd {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; annotations?: Record<string, string> };
  spec: Record<string, unknown> & { conversion?: unknown };
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

/** Reads CRDs from the (read-only) API module source tree; fails clearly when a file is not there. */
export async function readCrds(apiModuleDir: string, files: readonly string[]): Promise<Crd[]> {
  return Promise.all(
    files.map(async (rel) => {
      const file = path.join(apiModuleDir, rel);
      let text: string;
      try {
        text = await fs.readFile(file, 'utf8');
      } catch (err) {
        throw new MissingPrerequisiteError(`OCM CRD ${rel} is missing from ${apiModuleDir} (${(err as Error).message})`, {
          hint: `the ${OCM_API_MODULE}@${OCM_API_VERSION} module download may be incomplete; remove it with 'go clean -modcache' and run 'ocm-lab up' again`,
        });
      }
      const doc = YAML.parse(text) as Partial<Crd> | null;
      if (doc?.kind !== 'CustomResourceDefinition' || !doc.metadata?.name || !doc.spec) {
        throw new MissingPrerequisiteError(`${file} is not a CustomResourceDefinition`);
      }
      return doc as Crd;
    }),
  );
}

export interface ConversionWebhook {
  url: string;
  caBundlePem: string;
}

/** A copy of `crd` whose conversion goes to the webhook at `url` (no Service networking in the lab). */
export function withConversionWebhook(crd: Crd, webhook: ConversionWebhook): Crd {
  return {
    ...crd,
    spec: {
      ...crd.spec,
      conversion: {
        strategy: 'Webhook',
        webhook: {
          clientConfig: { url: webhook.url, caBundle: Buffer.from(webhook.caBundlePem, 'utf8').toString('base64') },
          conversionReviewVersions: ['v1', 'v1beta1'],
        },
      },
    },
  };
}

/** The hub CRD set with the addon CRDs pointed at the conversion webhook. */
export function hubCrds(all: Crd[], webhook: ConversionWebhook): Crd[] {
  return all.map((crd) => (ADDON_CONVERSION_CRDS.includes(crd.metadata.name) ? withConversionWebhook(crd, webhook) : crd));
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function crdHash(crd: Crd): string {
  return crypto.createHash('sha256').update(stableJson({ metadata: { name: crd.metadata.name }, spec: crd.spec })).digest('hex').slice(0, 32);
}

function established(crd: Crd | null): boolean {
  const conditions = crd?.status?.conditions ?? [];
  return conditions.some((c) => c.type === 'Established' && c.status === 'True') && conditions.some((c) => c.type === 'NamesAccepted' && c.status === 'True');
}

const crdHeader = (name: string) => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } });

/**
 * Installs CRDs and waits until every one is Established, so no custom
 * resource is ever created against a CRD the API server does not serve yet.
 * A CRD whose recorded hash matches is not touched again.
 */
export async function ensureCrds(clients: KubeClients, crds: Crd[], timeoutMs = 60_000): Promise<{ applied: string[]; kept: string[] }> {
  const applied: string[] = [];
  const kept: string[] = [];
  await Promise.all(
    crds.map(async (crd) => {
      const hash = crdHash(crd);
      const existing = await readOrNull<Crd>(clients, crdHeader(crd.metadata.name));
      if (existing?.metadata.annotations?.[HASH_ANNOTATION] === hash) {
        kept.push(crd.metadata.name);
        return;
      }
      const { status: _status, ...desired } = crd;
      await rawRequest(
        clients,
        'PATCH',
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}?fieldManager=${FIELD_MANAGER}&force=true`,
        { ...desired, metadata: { name: crd.metadata.name, annotations: { [HASH_ANNOTATION]: hash } } },
        'application/apply-patch+yaml',
      );
      applied.push(crd.metadata.name);
    }),
  );
  await Promise.all(
    crds.map((crd) =>
      waitUntil(
        async () => (established(await readOrNull<Crd>(clients, crdHeader(crd.metadata.name))) ? true : undefined),
        {
          timeoutMs,
          intervalMs: 200,
          what: `CRD ${crd.metadata.name} to be Established`,
          report: async () => {
            const now = await readOrNull<Crd>(clients, crdHeader(crd.metadata.name));
            return `conditions: ${JSON.stringify(now?.status?.conditions ?? [])}`;
          },
        },
      ),
    ),
  );
  return { applied: applied.sort(), kept: kept.sort() };
}
