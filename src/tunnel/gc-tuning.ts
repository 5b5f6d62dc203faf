/**
 * V8 garbage-collector setting for processes that stream bulk data through the tunnel.
 *
 * Every message on the bulk path allocates fresh ArrayBuffers (socket reads, grpc-js's
 * message concatenation and framing); they die young. V8 frees dead young ArrayBuffers
 * with a cheap scavenge once they pass twice the default semi-space size, and starts a
 * full mark-compact once external memory grows 64 MiB past its last baseline. On Node 20
 * (V8 11.3) the scavenge threshold is 32 MiB, so scavenges keep external memory low. On
 * Node 24 (V8 13.6) the threshold follows --scavenger-max-new-space-capacity-mb (32, so
 * 2 × 64 MiB without pointer compression = 128 MiB), the 64 MiB limit comes first, and a
 * 256 MiB transfer costs ~23 mark-compacts per process instead of ~1–6: 1.3–1.5× the CPU
 * per GiB. Lowering the flag at runtime restores the early scavenge (new space itself
 * keeps its size: it is laid out at startup); array-buffer sweeping on the main thread
 * makes the freed bytes count at once, so the limit is not reached while sweeping lags.
 * Not a full cure: in about half the runs one of server or agent still falls into a run of
 * ~20 mark-compacts per 256 MiB, each started by V8's marking task at ~9 of 25 MB heap.
 */
import v8 from 'node:v8';

/** Flags this module sets, unless the process was started with a value of its own. */
const FLAGS = ['--scavenger-max-new-space-capacity-mb=8', '--no-concurrent-array-buffer-sweeping'];

let applied = false;

/** True on V8 versions known to have the late young-ArrayBuffer scavenge (13, Node 24, and later). */
export function needsGcTuning(v8Version: string = process.versions.v8): boolean {
  const major = Number(v8Version.split('.')[0]);
  return Number.isInteger(major) && major >= 13;
}

/** Applies FLAGS once per process on affected V8 versions (not with OCM_LAB_TUNNEL_GC_TUNING=0); returns the flags it set. */
export function tuneGcForBulkTransfer(): string[] {
  if (applied || !needsGcTuning() || process.env.OCM_LAB_TUNNEL_GC_TUNING === '0') return [];
  applied = true;
  const given = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;
  const set: string[] = [];
  for (const flag of FLAGS) {
    const name = flag.replace(/^--(no-)?/, '').replace(/=.*$/, '');
    if (given.includes(name)) continue;
    v8.setFlagsFromString(flag);
    set.push(flag);
  }
  return set;
}
