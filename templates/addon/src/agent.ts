import { agentContext, applyObject } from 'ocm-lab/addon-framework';
import { reportConfigMap, VERSION } from './report.js';

// The agent's main: it runs on every managed cluster, in the Deployment the manager renders.
const ctx = await agentContext();
console.log(`${ctx.addonName} agent ${VERSION} on ${ctx.clusterName} (code ${ctx.codeHash})`);

async function report(): Promise<void> {
  if (!ctx.hub) throw new Error('no hub kubeconfig: the addon declares hubPermissions, so the Deployment mounts one');
  await applyObject(ctx.hub, reportConfigMap(ctx.clusterName, VERSION, ctx.codeHash));
}

// Report at once, then keep the report there (someone may delete it).
for (;;) {
  try {
    await report();
  } catch (err) {
    console.error(`report failed: ${(err as Error).message}`);
  }
  await new Promise((r) => setTimeout(r, 10_000));
}
