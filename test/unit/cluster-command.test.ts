import { describe, expect, it } from 'vitest';
import { withCluster, withoutCluster } from '../../src/cli/commands/cluster.js';
import { defaultLabConfig } from '../../src/config/index.js';
import { ConflictError, InvalidInputError, NotFoundError } from '../../src/errors.js';

describe('cluster add/remove as a new lab config', () => {
  const lab = defaultLabConfig();

  it('adds a spoke to the VPC of the other spokes, or the one named', () => {
    expect(withCluster(lab, 'cluster3').clusters.at(-1)).toEqual({ name: 'cluster3', vpc: 'vpc-2', hub: false });
    expect(withCluster(lab, 'edge', 'vpc-1').clusters.at(-1)).toEqual({ name: 'edge', vpc: 'vpc-1', hub: false });
    expect(withCluster(lab, 'cluster3').clusters.slice(0, 3)).toEqual(lab.clusters);
  });

  it('checks the new cluster like a lab file would', () => {
    expect(() => withCluster(lab, 'cluster1')).toThrow(InvalidInputError);
    expect(() => withCluster(lab, 'x', 'vpc-9')).toThrow(/--vpc vpc-9 is not a VPC of lab 'default'.*/);
    expect(() => withCluster(lab, 'Not_A_Name')).toThrow(InvalidInputError);
  });

  it('removes a spoke, refuses the hub (exit 6) and an unknown name (exit 5)', () => {
    expect(withoutCluster(lab, 'cluster2').clusters.map((c) => c.name)).toEqual(['hub', 'cluster1']);
    expect(() => withoutCluster(lab, 'hub')).toThrow(ConflictError);
    expect(() => withoutCluster(lab, 'nope')).toThrow(NotFoundError);
  });
});
