import crypto from 'node:crypto';
import { conditionOf, type Condition, type KubeObject } from '../../kube/objects.js';

/**
 * AddOnDeploymentConfig (addon.open-cluster-management.io/v1alpha1): which one is in effect for
 * a cluster, its spec hash, and the `status.configReferences` bookkeeping OCM defines for it.
 * OCM's hub addon-manager fills configReferences only for addons it manages; ours are
 * self-managed (lifecycle annotation `self`), so the framework's manager does that part itself,
 * with the same rules: the ManagedClusterAddOn's `spec.configs` over the ClusterManagementAddOn's
 * default, `desiredConfig.specHash` on every pass, `lastAppliedConfig` once the agent's
 * ManifestWork carrying that hash is applied and available.
 */
export const ADC_GROUP = 'addon.open-cluster-management.io';
export const ADC_RESOURCE = 'addondeploymentconfigs';
export const ADC_API = `${ADC_GROUP}/v1alpha1`;

/** On the ManifestWork: the spec hash of every config it was rendered from (the work API's key). */
export const WORK_CONFIG_SPEC_HASH_ANNOTATION = 'open-cluster-management.io/config-spec-hash';

export interface ConfigReferent {
  namespace?: string;
  name: string;
}

interface ConfigSpecHash extends ConfigReferent {
  specHash: string;
}

/** One entry of a ManagedClusterAddOn's `status.configReferences`. */
export interface ConfigReference extends ConfigReferent {
  group: string;
  resource: string;
  desiredConfig?: ConfigSpecHash;
  lastAppliedConfig?: ConfigSpecHash;
  lastObservedGeneration?: number;
}

export interface AddOnConfig extends ConfigReferent {
  group?: string;
  resource: string;
}

export interface ContainerResourceRequirements {
  containerID: string;
  resources: { limits?: Record<string, string | number>; requests?: Record<string, string | number>; claims?: unknown[] };
}

export interface AddOnDeploymentConfigSpec {
  customizedVariables?: { name: string; value?: string }[];
  nodePlacement?: { nodeSelector?: Record<string, string>; tolerations?: Record<string, unknown>[] };
  registries?: { source?: string; mirror: string }[];
  proxyConfig?: { httpProxy?: string; httpsProxy?: string; noProxy?: string; caBundle?: string };
  agentInstallNamespace?: string;
  resourceRequirements?: ContainerResourceRequirements[];
}

export interface AddOnDeploymentConfig extends KubeObject {
  spec?: AddOnDeploymentConfigSpec;
}

/**
 * Thrown by an addon's agentManifests when a customized variable is unusable: the manager then
 * leaves the agent as it was and reports the message in the ManagedClusterAddOn's Configured condition.
 */
export class AddonConfigError extends Error {
  override name = 'AddonConfigError';
  /** The Configured condition's reason (upstream's ConfigurationsNotValid unless the addon names a better one). */
  constructor(
    message: string,
    readonly reason = 'ConfigurationsNotValid',
  ) {
    super(message);
  }
}

/** The config in effect for one cluster, read from the hub. */
export interface EffectiveDeploymentConfig {
  referent: ConfigReferent;
  specHash: string;
  generation?: number;
  spec: AddOnDeploymentConfigSpec;
}

const isAdc = (c: { group?: string; resource: string }) => (c.group ?? '') === ADC_GROUP && c.resource === ADC_RESOURCE;

/**
 * Which AddOnDeploymentConfig a cluster's addon uses: the first one in the ManagedClusterAddOn's
 * `spec.configs`, else the ClusterManagementAddOn's default; null when neither names one.
 */
export function desiredDeploymentConfig(
  supportedConfigs: { group?: string; resource: string; defaultConfig?: ConfigReferent }[] | undefined,
  addOnConfigs: AddOnConfig[] | undefined,
): ConfigReferent | null {
  const own = (addOnConfigs ?? []).find(isAdc);
  if (own) return referentOf(own);
  const fallback = (supportedConfigs ?? []).find(isAdc)?.defaultConfig;
  return fallback?.name ? referentOf(fallback) : null;
}

function referentOf(r: ConfigReferent): ConfigReferent {
  return r.namespace ? { namespace: r.namespace, name: r.name } : { name: r.name };
}

const sameReferent = (a: ConfigReferent | undefined, b: ConfigReferent | undefined) =>
  !!a && !!b && (a.namespace ?? '') === (b.namespace ?? '') && a.name === b.name;

/**
 * The sha256 of an object's config fields (every top-level field but apiVersion, kind, metadata
 * and status) as OCM computes it, so our hashes equal the ones upstream components write.
 */
export function specHash(obj: Record<string, unknown>): string {
  const config: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (!['apiVersion', 'kind', 'metadata', 'status'].includes(k)) config[k] = v;
  return crypto.createHash('sha256').update(goJson(config)).digest('hex');
}

/** JSON as Go's encoding/json writes it: object keys sorted, `<`, `>`, `&`, U+2028/9 escaped. */
export function goJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(goJson).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => Buffer.from(a).compare(Buffer.from(b)));
    return `{${entries.map(([k, v]) => `${goString(k)}:${goJson(v)}`).join(',')}}`;
  }
  if (typeof value === 'string') return goString(value);
  return JSON.stringify(value);
}

function goString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || ch === '<' || ch === '>' || ch === '&' || code === 0x2028 || code === 0x2029) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** The work annotation's map: `<resource>.<group>/<namespace>/<name>` → spec hash of every desired config. */
export function configSpecHashes(refs: ConfigReference[]): Record<string, string> {
  const map: Record<string, string> = {};
  for (const r of refs) {
    if (!r.desiredConfig) continue;
    map[`${r.resource}${r.group ? `.${r.group}` : ''}/${r.desiredConfig.namespace ?? ''}/${r.desiredConfig.name}`] = r.desiredConfig.specHash;
  }
  return map;
}

/**
 * The configReferences with the AddOnDeploymentConfig entry set to `desired` (null: removed).
 * The entry of the same config keeps its lastAppliedConfig; references of other config types
 * (written by someone else) are left as they are.
 */
export function withDesiredConfig(
  current: ConfigReference[] | undefined,
  desired: EffectiveDeploymentConfig | { referent: ConfigReferent; specHash: ''; generation?: number } | null,
): ConfigReference[] {
  const others = (current ?? []).filter((r) => !isAdc(r));
  if (!desired) return others;
  const previous = (current ?? []).find((r) => isAdc(r) && sameReferent(r.desiredConfig ?? r, desired.referent));
  const entry: ConfigReference = {
    group: ADC_GROUP,
    resource: ADC_RESOURCE,
    ...desired.referent,
    desiredConfig: { ...desired.referent, specHash: desired.specHash },
    ...(previous?.lastAppliedConfig ? { lastAppliedConfig: previous.lastAppliedConfig } : {}),
    ...(desired.generation !== undefined
      ? { lastObservedGeneration: desired.generation }
      : previous?.lastObservedGeneration !== undefined
        ? { lastObservedGeneration: previous.lastObservedGeneration }
        : {}),
  };
  return [...others, entry];
}

/**
 * True when the agent's ManifestWork was rendered from exactly these configs (its annotation)
 * and the work agent reports it Applied and Available for the work's current generation: the
 * point where upstream's addon-manager records lastAppliedConfig.
 */
function workCarriesConfigs(work: KubeObject | null, refs: ConfigReference[]): boolean {
  if (!work) return false;
  const wanted = configSpecHashes(refs);
  let carried: Record<string, string> = {};
  const raw = work.metadata.annotations?.[WORK_CONFIG_SPEC_HASH_ANNOTATION];
  if (raw) {
    try {
      carried = JSON.parse(raw) as Record<string, string>;
    } catch {
      return false;
    }
  }
  if (JSON.stringify(Object.entries(carried).sort()) !== JSON.stringify(Object.entries(wanted).sort())) return false;
  const generation = (work.metadata as { generation?: number }).generation;
  return ['Applied', 'Available'].every((type) => {
    const c = conditionOf(work, type);
    return c?.status === 'True' && (generation === undefined || c.observedGeneration === undefined || c.observedGeneration === generation);
  });
}

/** What one pass knows about the cluster's configs, for the ManagedClusterAddOn status. */
export interface ConfigState {
  /** configReferences with the desired AddOnDeploymentConfig (hash empty when it cannot be read). */
  references: ConfigReference[];
  /** Why the desired config cannot be used (missing, invalid): the agent is left as it was. */
  problem?: string;
  /** The Configured condition's reason for `problem` (default ConfigurationsNotValid). */
  problemReason?: string;
  /** Nothing to deliver to the cluster: a config counts as applied at once. */
  noManifests?: boolean;
}

/**
 * The configReferences and the Configured / Progressing conditions for this pass: once the
 * work carries the desired configs and is applied, every reference's lastAppliedConfig becomes
 * its desiredConfig (as upstream's addon-manager does).
 */
export function configStatus(state: ConfigState, work: KubeObject | null): { references: ConfigReference[]; conditions: Condition[] } {
  const conditions: Condition[] = [];
  if (state.problem) {
    conditions.push({ type: 'Configured', status: 'False', reason: state.problemReason ?? 'ConfigurationsNotValid', message: state.problem });
    return { references: state.references, conditions };
  }
  conditions.push({ type: 'Configured', status: 'True', reason: 'ConfigurationsConfigured', message: 'Configurations configured' });
  const applied = state.noManifests || workCarriesConfigs(work, state.references);
  const references = applied ? state.references.map((r) => (r.desiredConfig ? { ...r, lastAppliedConfig: { ...r.desiredConfig } } : r)) : state.references;
  conditions.push(
    applied
      ? { type: 'Progressing', status: 'False', reason: 'Completed', message: 'completed with no errors.' }
      : {
          type: 'Progressing',
          status: 'True',
          reason: 'Progressing',
          message: work ? 'the agent ManifestWork with the desired configs is not applied and available yet' : 'no addon works',
        },
  );
  return { references, conditions };
}
