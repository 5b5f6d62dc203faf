import { describe, expect, it } from 'vitest';
import { checkExpectation, judgeStep, parseTables, type Expectation, type ExpectationKind } from '../../src/scenario/index.js';

const e = (kind: ExpectationKind, text: string): Expectation => ({ kind, text, line: 1, endLine: 3 });

// kubectl get deploy -A; DEGRADED-style empty cells come from `get managedclusteraddon`.
const DEPLOYMENTS = `NAMESPACE                       NAME                            READY   UP-TO-DATE   AVAILABLE   AGE
kube-system                     coredns                         2/2     2            2           20d
open-cluster-management-agent   klusterlet-registration-agent   1/1     1            1           20d
`;
const ADDONS = `NAMESPACE   NAME            AVAILABLE   DEGRADED   PROGRESSING
cluster1    cluster-proxy   True                   
cluster2    cluster-proxy   Unknown                False
`;
const HEALTH = `CLUSTER NAME    INSTALLED    AVAILABLE    PROBED HEALTH    LATENCY
cluster1        True         True         True             67.595144ms
`;

describe('expectations', () => {
  it('parses kubectl-style tables by header positions, empty cells and multi-word headers included', () => {
    const [addons] = parseTables(ADDONS);
    expect(addons!.headers).toEqual(['NAMESPACE', 'NAME', 'AVAILABLE', 'DEGRADED', 'PROGRESSING']);
    expect(addons!.rows).toEqual([
      ['cluster1', 'cluster-proxy', 'True', '', ''],
      ['cluster2', 'cluster-proxy', 'Unknown', '', 'False'],
    ]);
    expect(parseTables(HEALTH)[0]!.headers).toEqual(['CLUSTER NAME', 'INSTALLED', 'AVAILABLE', 'PROBED HEALTH', 'LATENCY']);
    // Two commands in one block: two tables.
    expect(parseTables(`deployment "x" successfully rolled out\n${DEPLOYMENTS}\n${ADDONS}`).map((t) => t.rows.length)).toEqual([2, 2]);
  });

  it('contains and matches look at the output without colour codes', () => {
    expect(checkExpectation(e('contains', 'coredns  '), DEPLOYMENTS)).toBeNull();
    expect(checkExpectation(e('contains', 'Forbidden'), DEPLOYMENTS)).toBe('expected the output to contain:\nForbidden');
    expect(checkExpectation(e('contains', 'connected'), '\u001b[32mconnected\u001b[0m')).toBeNull();
    expect(checkExpectation(e('matches', '^kube-system\\s+coredns\\s+2/2'), DEPLOYMENTS)).toBeNull();
    expect(checkExpectation(e('matches', '^coredns'), DEPLOYMENTS)).toBe('expected the output to match /^coredns/m');
  });

  it('row: leading cells in order, * for any one cell', () => {
    expect(checkExpectation(e('row', 'kube-system coredns 2/2'), DEPLOYMENTS)).toBeNull();
    expect(checkExpectation(e('row', 'kube-system  *  2/2\nopen-cluster-management-agent klusterlet-registration-agent 1/1'), DEPLOYMENTS)).toBeNull();
    expect(checkExpectation(e('row', 'kube-system coredns 0/2'), DEPLOYMENTS)).toBe('expected a table row starting with:\nkube-system coredns 0/2');
    // Cells must be leading: a row's later cells alone do not match.
    expect(checkExpectation(e('row', 'coredns 2/2'), DEPLOYMENTS)).not.toBeNull();
    // An empty cell is a cell: `*` stands for it, or the whitespace reading skips it.
    expect(checkExpectation(e('row', 'cluster1 cluster-proxy True'), ADDONS)).toBeNull();
    expect(checkExpectation(e('row', 'cluster2 cluster-proxy Unknown * False'), ADDONS)).toBeNull();
    expect(checkExpectation(e('row', 'cluster2 cluster-proxy Unknown False'), ADDONS)).toBeNull();
  });

  it('row with a header line: only the named columns, by name', () => {
    expect(checkExpectation(e('row', 'NAME     READY\ncoredns  2/2'), DEPLOYMENTS)).toBeNull();
    expect(checkExpectation(e('row', 'AVAILABLE  NAME\n1          klusterlet-registration-agent'), DEPLOYMENTS)).toBeNull();
    expect(checkExpectation(e('row', 'NAME     READY\ncoredns  1/2'), DEPLOYMENTS)).toBe('expected rows under the columns NAME, READY:\ncoredns  1/2');
    expect(checkExpectation(e('row', 'CLUSTER NAME   PROBED HEALTH\ncluster1       True'), HEALTH)).toBeNull();
    expect(checkExpectation(e('row', 'NAME  STATUS\ncoredns  Running'), DEPLOYMENTS)).toMatch(
      /^expected a table with the columns NAME, STATUS; the output's tables have NAMESPACE, NAME, READY/,
    );
  });

  it('judges a step: exit status first, then every expectation', () => {
    const step = (...expectations: Expectation[]) => ({ expectations });
    expect(judgeStep(step(), 'x', 0)).toEqual({ failure: null, expectation: null });
    expect(judgeStep(step(), 'x', 3)).toEqual({ failure: 'the command failed with exit status 3', expectation: null });
    expect(judgeStep(step(e('contains', 'x')), 'x', 1).failure).toBe('the command failed with exit status 1');
    const forbidden = e('fails', 'Forbidden');
    expect(judgeStep(step(forbidden), 'Error from server (Forbidden): pods is forbidden', 1).failure).toBeNull();
    expect(judgeStep(step(forbidden), 'NAME', 0)).toEqual({ failure: 'expected the command to fail, but it exited 0', expectation: forbidden });
    expect(judgeStep(step(forbidden), 'Error from server (NotFound)', 1)).toEqual({
      failure: 'expected the failure to say:\nForbidden',
      expectation: forbidden,
    });
    expect(judgeStep(step(e('fails', '')), 'anything', 2).failure).toBeNull();
    // With expect fails, other expectations check the failure's output.
    expect(judgeStep(step(e('fails', ''), e('matches', 'pods')), 'Error: pods is forbidden', 1).failure).toBeNull();
    expect(judgeStep(step(e('fails', ''), e('matches', 'secrets')), 'Error: pods is forbidden', 1).failure).toBe('expected the output to match /secrets/m');
  });
});
