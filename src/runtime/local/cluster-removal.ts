import fs from 'node:fs/promises';
import path from 'node:path';
import { cleanupContainers, runcAt } from '../../nodelet/oci/index.js';
import { podNetnsPrefix } from '../../nodelet/pod-network/index.js';
import { run } from '../../util/exec.js';
import { CONTROL_PLANE_COMPONENTS, type ControlPlaneComponent } from './controlplane.js';
import type { NetworkPlan } from './network/index.js';
import { nodeletWorkDir } from './nodelets.js';
import { readPid, stopProcess } from './process.js';

/** The binary a pid file belongs to is whatever the recorded process was started as. */
export async function binaryOfPidFile(pidFile: string): Promise<string> {
  const pid = await readPid(pidFile);
  if (pid === null) return '';
  try {
    return path.resolve(await fs.readlink(`/proc/${pid}/exe`));
  } catch {
    return '';
  }
}

/**
 * Stops every process of one cluster that has a pid file (the nodelet before
 * the control plane, the control plane in reverse start order), then the
 * containers a killed nodelet may have left. Returns what it stopped.
 */
export async function stopClusterProcesses(clusterDir: string, cluster: string): Promise<string[]> {
  const stopped: string[] = [];
  const runDir = path.join(clusterDir, 'run');
  const pidFiles = (await fs.readdir(runDir).catch(() => [] as string[])).filter((f) => f.endsWith('.pid'));
  const order = (f: string) => CONTROL_PLANE_COMPONENTS.indexOf(f.replace(/\.pid$/, '') as ControlPlaneComponent);
  pidFiles.sort((a, b) => order(b) - order(a));
  for (const f of pidFiles) {
    const pidFile = path.join(runDir, f);
    if (await stopProcess({ pidFile, binary: await binaryOfPidFile(pidFile) })) stopped.push(`${cluster}/${f.replace(/\.pid$/, '')}`);
  }
  const removed = await cleanupContainers(runcAt(path.join(nodeletWorkDir({ dir: clusterDir }), 'runc'))).catch(() => [] as string[]);
  stopped.push(...removed.map((id) => `${cluster}/container ${id}`));
  return stopped;
}

/**
 * Removes one cluster of a running lab and nothing else: its processes and
 * containers, its pods' network namespaces, its address in the VPC namespace
 * and its directory. The VPC and the other clusters stay as they are.
 */
export async function removeClusterOf(labDirectory: string, labName: string, plan: NetworkPlan | null, cluster: string): Promise<string[]> {
  const clusterDir = path.join(labDirectory, 'clusters', cluster);
  const stopped = await stopClusterProcesses(clusterDir, cluster);
  const prefix = podNetnsPrefix(labName, cluster);
  const namespaces = (await run('ip', ['netns', 'list'], { allowFailure: true })).stdout
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter((name) => name.startsWith(prefix));
  for (const netns of namespaces) await run('ip', ['netns', 'del', netns], { allowFailure: true });
  const vpc = plan?.mode === 'netns' ? plan.vpcs.find((v) => cluster in v.clusterAddresses) : undefined;
  if (vpc) await run('ip', ['-n', vpc.netns, 'addr', 'del', `${vpc.clusterAddresses[cluster]}/${vpc.prefixLength}`, 'dev', vpc.nsIf], { allowFailure: true });
  await fs.rm(clusterDir, { recursive: true, force: true });
  return stopped;
}
