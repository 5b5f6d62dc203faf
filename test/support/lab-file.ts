/**
 * A small valid lab file: the hub in vpc-1, cluster1 and cluster2 in vpc-2. Tests break one thing in it and
 * name lines: 1 apiVersion, 2 kind, 3 vpcs, 4-5 the two VPCs, 6 clusters, 7-9 hub, 10-11 cluster1, 12-13 cluster2.
 */
export const VALID_LAB_FILE = `apiVersion: ocm-lab/v1alpha1
kind: Lab
vpcs:
  - name: vpc-1
  - name: vpc-2
clusters:
  - name: hub
    vpc: vpc-1
    hub: true
  - name: cluster1
    vpc: vpc-2
  - name: cluster2
    vpc: vpc-2
`;

/** VALID_LAB_FILE without cluster2 (its lines 1-11): the smallest lab with a hub and one managed cluster. */
export const MINIMAL_LAB_FILE = VALID_LAB_FILE.slice(0, VALID_LAB_FILE.indexOf('  - name: cluster2\n'));
