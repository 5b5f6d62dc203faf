import type { LabStatus, RuntimeName } from './types.js';

/** What every runtime reports for a lab it has no state of. */
export function notUpStatus(lab: string, runtime: RuntimeName): LabStatus {
  return {
    lab,
    runtime,
    exists: false,
    kubeconfig: null,
    clusters: [],
    vpcs: [],
    isolation: { enforced: false, reason: 'the lab is not up' },
    capabilities: [],
  };
}
