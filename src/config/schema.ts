import { z } from 'zod';
import { checkPrivateCidr } from './cidr.js';
import { OCM_VERSION_CHOICES, resolveOcmVersion } from './ocm-version.js';
import {
  ADDON_IMPLEMENTATIONS,
  API_VERSION,
  KIND,
  MAX_LAB_NAME,
  MAX_NAME,
  KUBERNETES_VERSION_CHOICES,
  PROXY_ENTRYPOINTS,
  SUPPORTED_KUBERNETES_VERSIONS,
  type AddonVocabulary,
} from './types.js';
import { minorOf } from '../provision/versions.js';
import { ARTIFACT_MODES } from '../provision/artifacts.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function dnsLabel(max: number) {
  return z
    .string()
    .max(max, { error: `must be at most ${max} characters; shorten it` })
    .regex(DNS1123_LABEL, {
      error: "must be a DNS-1123 label: lower-case letters, digits and '-', starting and ending with a letter or digit (e.g. cluster-1)",
    });
}

const oneOf = (what: string, values: readonly string[]) => `${what}; use one of: ${values.join(', ')}`;

const UNSUPPORTED_OCM = `is not a supported OCM version; ${OCM_VERSION_CHOICES}`;
const KIND_PATCHES = KUBERNETES_VERSION_CHOICES.filter((v) => !SUPPORTED_KUBERNETES_VERSIONS.includes(v) && v !== minorOf(v));
const KUBERNETES_VERSION_ERROR =
  `${oneOf('is not a supported Kubernetes version', SUPPORTED_KUBERNETES_VERSIONS)}, their minors (${SUPPORTED_KUBERNETES_VERSIONS.map(minorOf).join(', ')}) ` +
  `or the patches of kind's node images (${KIND_PATCHES.join(', ')}); ` +
  '`ocm-lab versions` lists which source gives which';

/** An addon as a name of `names`, or a name with the implementation to run (`{name: cluster-proxy, implementation: upstream}`). */
function addonSchema(names: readonly string[]) {
  if (!names.length) throw new Error('internal: the addon vocabulary names no addon (src/addons/registry.ts lists them)');
  const addonName = z.enum(names as [string, ...string[]], { error: oneOf('is not an addon ocm-lab knows', names) });
  return z.union([
    addonName,
    z.strictObject({
      name: addonName,
      implementation: z.enum(ADDON_IMPLEMENTATIONS, { error: oneOf('is not an addon implementation', ADDON_IMPLEMENTATIONS) }).optional(),
    }),
  ]);
}

/** One side's gates: `Name: true|false` (Enable/Disable); which names a line accepts is checked in rules.ts and on `up`. */
const gateSettingsSchema = z.record(
  z.string().regex(/^[A-Z][A-Za-z0-9]*$/, { error: 'is not a feature gate name (OCM names them in UpperCamelCase, e.g. ManifestWorkReplicaSet)' }),
  z.boolean({ error: 'must be true (Enable) or false (Disable)' }),
);

const clusterSchema = z.strictObject({
  name: dnsLabel(MAX_NAME),
  vpc: z.string(),
  hub: z.boolean().optional(),
});

/** Every field but `addons:`, whose names come from the vocabulary (labFileSchema). */
const baseSchema = z.strictObject({
  apiVersion: z.literal(API_VERSION, { error: `must be ${API_VERSION}` }),
  kind: z.literal(KIND, { error: `must be ${KIND}` }),
  name: dnsLabel(MAX_LAB_NAME).optional(),
  kubernetesVersion: z.enum(KUBERNETES_VERSION_CHOICES, { error: KUBERNETES_VERSION_ERROR }).optional(),
  // A minor (v1.3) stands for its newest patch; normalise() resolves it.
  ocmVersion: z
    .string()
    .refine((v) => resolveOcmVersion(v) !== undefined, { error: UNSUPPORTED_OCM })
    .optional(),
  network: z
    .strictObject({
      cidr: z
        .string()
        .superRefine((cidr, ctx) => {
          const why = checkPrivateCidr(cidr);
          if (why) ctx.addIssue({ code: 'custom', message: why });
        })
        .optional(),
    })
    .optional(),
  vpcs: z.array(z.strictObject({ name: dnsLabel(MAX_NAME) })).min(1, { error: 'must list at least one VPC' }),
  clusters: z.array(clusterSchema).min(1, { error: 'must list at least one cluster' }),
  addons: z.array(z.never()).optional(),
  artifacts: z.enum(ARTIFACT_MODES, { error: oneOf('is not where artifacts can come from', ARTIFACT_MODES) }).optional(),
  clusterProfile: z.boolean({ error: 'must be true or false (the ClusterProfile inventory, on by default)' }).optional(),
  localCluster: z
    .boolean({ error: 'must be true or false (the hub joined to itself as local-cluster; default: on for OCM v1.3.x, off for v1.2.x)' })
    .optional(),
  featureGates: z.strictObject({ hub: gateSettingsSchema.optional(), klusterlet: gateSettingsSchema.optional() }).optional(),
  clusterProxy: z
    .strictObject({
      entrypoint: z.enum(PROXY_ENTRYPOINTS, { error: oneOf("is not a way cluster-proxy's agents reach the proxy-server", PROXY_ENTRYPOINTS) }),
    })
    .optional(),
  mirrors: z.string().min(1, { error: 'must name a mirrors file (docs/provisioning.md, "Mirrors")' }).optional(),
  ocmSource: z
    .string()
    .regex(/\.(tar\.gz|tgz)$/, {
      error: 'must name OCM\'s source archive, a .tar.gz of its tree at the lab\'s ocmVersion with vendor/ (docs/provisioning.md, "Mirrors")',
    })
    .optional(),
  // Runtime names and their options belong to the runtimes (src/runtime/registry.ts), which check them when `up` makes one.
  runtime: z
    .object({ name: dnsLabel(MAX_NAME).optional() })
    .catchall(z.record(z.string(), z.unknown()))
    .optional(),
});

/**
 * The lab file as written, its addons named from `vocabulary`. Shapes and per-field formats only: rules that
 * span fields (uniqueness, references, one hub, limits, what an addon requires) live in rules.ts so they are
 * reported even when some field has the wrong shape.
 */
export function labFileSchema(vocabulary: AddonVocabulary): LabFileSchema {
  // Built again only when the names change (the fuzz tests parse thousands of files with the same ones).
  const key = vocabulary.names.join('\n');
  if (built?.key !== key) built = { key, schema: withAddons(vocabulary.names) };
  return built.schema;
}

const withAddons = (names: readonly string[]) => baseSchema.extend({ addons: z.array(addonSchema(names)).optional() });
type LabFileSchema = ReturnType<typeof withAddons>;
let built: { key: string; schema: LabFileSchema } | undefined;

export type LabFile = z.infer<LabFileSchema>;

/** Field names allowed at each level ('' = top, 'clusters' = inside one cluster), for "did you mean" hints. */
export const KNOWN_FIELDS: Readonly<Record<string, readonly string[]>> = {
  '': Object.keys(baseSchema.shape),
  network: ['cidr'],
  vpcs: Object.keys(baseSchema.shape.vpcs.element.shape),
  clusters: Object.keys(clusterSchema.shape),
  addons: ['name', 'implementation'],
  clusterProxy: ['entrypoint'],
  featureGates: ['hub', 'klusterlet'],
};
