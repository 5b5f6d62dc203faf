import { z } from 'zod';
import { ADDON_NAMES, API_VERSION, KIND } from './types.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const dnsLabel = (max: number) =>
  z
    .string()
    .max(max, { message: `must be at most ${max} characters` })
    .regex(DNS1123_LABEL, { message: "must be a DNS-1123 label: lower-case letters, digits and '-', starting and ending with a letter or digit" });

/** The lab file as written; defaults are filled in by `normalise`. */
export const labFileSchema = z.strictObject({
  apiVersion: z.literal(API_VERSION, { message: `must be ${API_VERSION}` }),
  kind: z.literal(KIND, { message: `must be ${KIND}` }),
  name: dnsLabel(20).optional(),
  kubernetesVersion: z.string().optional(),
  ocmVersion: z.string().optional(),
  network: z.strictObject({ cidr: z.string().optional() }).optional(),
  vpcs: z.array(z.strictObject({ name: dnsLabel(63) })).min(1, { message: 'must list at least one VPC' }),
  clusters: z
    .array(z.strictObject({ name: dnsLabel(63), vpc: z.string({ message: 'is required: the name of one of the VPCs' }), hub: z.boolean().optional() }))
    .min(1, { message: 'must list at least one cluster' }),
  addons: z.array(z.enum(ADDON_NAMES as unknown as [string, ...string[]], { message: `must be one of ${ADDON_NAMES.join(', ')}` })).optional(),
});

export type LabFile = z.infer<typeof labFileSchema>;

/** Field names known at each level, for "did you mean" hints. */
export const KNOWN_FIELDS: Record<string, string[]> = {
  '': ['apiVersion', 'kind', 'name', 'kubernetesVersion', 'ocmVersion', 'network', 'vpcs', 'clusters', 'addons'],
  network: ['cidr'],
  vpcs: ['name'],
  clusters: ['name', 'vpc', 'hub'],
};
