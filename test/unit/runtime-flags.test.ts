import { describe, expect, it } from 'vitest';
import { ExitCode, LabError } from '../../src/errors.js';
import { optionsFromFlags } from '../../src/runtime/flags.js';
import { RUNTIME_UP_FLAGS } from '../../src/runtime/registry.js';

/** The options `up`'s flags give, or the error they are refused with. */
function options(argv: Record<string, unknown>, choice: string): Record<string, Record<string, unknown>> | LabError {
  try {
    return optionsFromFlags(argv, choice, RUNTIME_UP_FLAGS);
  } catch (err) {
    return err as LabError;
  }
}

describe("up's runtime flags come from each runtime's definition", () => {
  it('existing: the kubeconfig and contexts as its options, spoke contexts as a list', () => {
    expect(options({ kubeconfig: '/k', 'hub-context': 'hub' }, 'existing')).toEqual({ existing: { kubeconfig: '/k', hubContext: 'hub', spokeContexts: [] } });
    expect(options({ kubeconfig: '/k', 'hub-context': 'a', 'spoke-context': ['b', 'c'], 'hub-server': 'https://h:6443' }, 'existing')).toEqual({
      existing: { kubeconfig: '/k', hubContext: 'a', spokeContexts: ['b', 'c'], hubServer: 'https://h:6443' },
    });
    expect(options({ 'spoke-context': [] }, 'existing')).toEqual({});
  });

  it("another runtime's flags are exit 2 naming them (existing's also under auto, which never picks existing)", () => {
    for (const choice of ['auto', 'kind', 'local']) {
      const err = options({ 'hub-context': 'hub' }, choice) as LabError;
      expect(err.exitCode).toBe(ExitCode.invalidInput);
      expect(err.message).toBe('--kubeconfig, --hub-context, --spoke-context, --image-registry and --hub-server are for --runtime existing');
    }
    expect((options({ 'node-image': 'kindest/node:v1.34.4' }, 'local') as LabError).message).toBe('--node-image is for --runtime kind');
    expect((options({ 'node-image': 'kindest/node:v1.34.4' }, 'existing') as LabError).message).toBe('--node-image is for --runtime kind');
  });

  it('--node-image is taken under auto, for kind only if auto picks kind', () => {
    expect(options({ 'node-image': 'kindest/node:v1.34.4' }, 'auto')).toEqual({ kind: { nodeImage: 'kindest/node:v1.34.4' } });
    expect(options({ 'node-image': 'kindest/node:v1.34.4' }, 'kind')).toEqual({ kind: { nodeImage: 'kindest/node:v1.34.4' } });
    expect(options({}, 'kind')).toEqual({});
  });
});
