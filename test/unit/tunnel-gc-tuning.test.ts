import { describe, expect, it } from 'vitest';
import { needsGcTuning } from '../../src/tunnel/gc-tuning.js';

describe('tunnel GC tuning', () => {
  it('applies to V8 13 and later (Node 24), not to V8 11 (Node 20)', () => {
    expect(needsGcTuning('11.3.244.8-node.38')).toBe(false);
    expect(needsGcTuning('12.4.254.21-node.33')).toBe(false);
    expect(needsGcTuning('13.6.233.17-node.53')).toBe(true);
    expect(needsGcTuning('14.1.0')).toBe(true);
    expect(needsGcTuning('garbage')).toBe(false);
  });
});
