import { InvalidInputError } from '../errors.js';
import { CLUSTER_PROFILE_GATE, unknownGateMessage, unknownGates, type FeatureGateSettings, type GateSide } from './feature-gates.js';
import type { LabConfig } from './types.js';

export interface FeatureGateFlags {
  'hub-feature-gates'?: string[] | undefined;
  'klusterlet-feature-gates'?: string[] | undefined;
}

const FLAG: Record<GateSide, keyof FeatureGateFlags> = { hub: 'hub-feature-gates', klusterlet: 'klusterlet-feature-gates' };

/** `Name=true,Other=false` (or a bare `Name` for true), as clusteradm's `--feature-gates`; values may repeat the flag. */
export function parseGateFlag(flag: string, values: readonly string[]): FeatureGateSettings {
  const settings: FeatureGateSettings = {};
  for (const item of values.flatMap((v) => v.split(',')).map((v) => v.trim())) {
    if (!item) continue;
    const match = /^([A-Z][A-Za-z0-9]*)(?:=(true|false))?$/.exec(item);
    if (!match)
      throw new InvalidInputError(`--${flag} ${item}: not a gate setting`, {
        hint: `write Name=true or Name=false, comma-separated (e.g. --${flag} ManifestWorkReplicaSet=true); docs/lab-file.md lists each line's gates`,
      });
    settings[match[1]!] = match[2] !== 'false';
  }
  return settings;
}

/**
 * The lab with `--hub-feature-gates` and `--klusterlet-feature-gates` over its file's featureGates, and every
 * gate checked against the lab's OCM line (after --ocm-version): one the line does not know is bad input
 * (exit 2) naming the gate, the line and the gates it accepts. ClusterProfile goes to `clusterProfile`.
 */
export function withFeatureGates(config: LabConfig, flags: FeatureGateFlags): LabConfig {
  const gates = { ...config.featureGates };
  let clusterProfile = config.clusterProfile;
  for (const side of ['hub', 'klusterlet'] as GateSide[]) {
    const given = flags[FLAG[side]];
    const fromFlag: FeatureGateSettings = given?.length ? parseGateFlag(FLAG[side], given) : {};
    const { [CLUSTER_PROFILE_GATE]: profile, ...rest } = { ...gates[side], ...fromFlag };
    if (side === 'hub' && profile !== undefined) clusterProfile = profile;
    const unknown = unknownGates(config.ocmVersion, side, rest);
    if (unknown.length)
      throw new InvalidInputError(
        `${unknown.some((g) => g in fromFlag) ? `--${FLAG[side]}` : `featureGates.${side}`}: ${unknownGateMessage(config.ocmVersion, side, unknown)}`,
        {
          hint: `use one of the accepted gates, or another --ocm-version (docs/lab-file.md, "featureGates", lists each line's)`,
        },
      );
    if (Object.keys(rest).length) gates[side] = rest;
    else delete gates[side];
  }
  const { featureGates: _old, ...others } = config;
  return { ...others, ...(Object.keys(gates).length ? { featureGates: gates } : {}), clusterProfile };
}
