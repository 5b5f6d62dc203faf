import assert from 'node:assert/strict';
import { test } from 'node:test';
import addon from '../src/manager.js';
import { reportConfigMap, VERSION } from '../src/report.js';

test('the manager deploys the agent with a hub identity', async () => {
  assert.equal(addon.name, '__NAME__');
  const objects = await addon.agentManifests('cluster1', undefined as never);
  const deployment = objects.find((o) => o.kind === 'Deployment');
  assert.ok(deployment, 'a Deployment among the agent manifests');
  assert.ok(addon.hubPermissions?.some((r) => r.resources.includes('configmaps')));
});

test('the report names the cluster and the version', () => {
  const cm = reportConfigMap('cluster1', VERSION, 'abc');
  assert.equal(cm.metadata.namespace, 'cluster1');
  assert.deepEqual(cm.data, { cluster: 'cluster1', version: VERSION, codeHash: 'abc' });
});
