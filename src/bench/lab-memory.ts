import fs from 'node:fs/promises';
import path from 'node:path';

/** Memory of a set of processes: RSS counts shared pages in every process, PSS splits them between the sharers. */
export interface MemoryTotals {
  processes: number;
  rssKb: number;
  pssKb: number;
}

/** pid → parent pid of every process on the machine. */
async function parentPids(): Promise<Map<number, number>> {
  const parents = new Map<number, number>();
  for (const p of await fs.readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(p)) continue;
    const stat = await fs.readFile(`/proc/${p}/stat`, 'utf8').catch(() => '');
    const ppid = Number.parseInt(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] ?? '', 10);
    if (ppid > 0) parents.set(Number(p), ppid);
  }
  return parents;
}

/**
 * The processes of each cluster of a lab: those its pid files under clusters/<name>/run record
 * (control plane, nodelet) and all their descendants (the pods the nodelet runs).
 */
export async function labProcessesByCluster(labDirectory: string): Promise<Map<string, Set<number>>> {
  const byCluster = new Map<string, Set<number>>();
  for (const c of await fs.readdir(path.join(labDirectory, 'clusters')).catch(() => [] as string[])) {
    const pids = new Set<number>();
    const runDir = path.join(labDirectory, 'clusters', c, 'run');
    for (const f of await fs.readdir(runDir).catch(() => [] as string[])) {
      const pid = Number.parseInt(await fs.readFile(path.join(runDir, f), 'utf8').catch(() => ''), 10);
      if (pid > 0) pids.add(pid);
    }
    byCluster.set(c, pids);
  }
  const parents = await parentPids();
  for (const pids of byCluster.values()) {
    let grew = true;
    while (grew) {
      grew = false;
      for (const [pid, ppid] of parents) {
        if (pids.has(ppid) && !pids.has(pid)) {
          pids.add(pid);
          grew = true;
        }
      }
    }
  }
  return byCluster;
}

/** Rss and Pss of one /proc/<pid>/smaps_rollup text, in kB; null when either line is missing. */
export function parseSmapsRollup(text: string): { rssKb: number; pssKb: number } | null {
  const rss = /^Rss:\s+(\d+) kB/m.exec(text);
  const pss = /^Pss:\s+(\d+) kB/m.exec(text);
  return rss && pss ? { rssKb: Number(rss[1]), pssKb: Number(pss[1]) } : null;
}

/** Every process of a lab, whichever cluster it belongs to. */
async function labProcesses(labDirectory: string): Promise<Set<number>> {
  const all = new Set<number>();
  for (const pids of (await labProcessesByCluster(labDirectory)).values()) for (const p of pids) all.add(p);
  return all;
}

async function memoryOfPid(pid: number): Promise<{ rssKb: number; pssKb: number } | null> {
  const rollup = await fs.readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => null);
  const fromRollup = rollup === null ? null : parseSmapsRollup(rollup);
  if (fromRollup) return fromRollup;
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? { rssKb: Number(m[1]), pssKb: Number(m[1]) } : null;
}

export async function memoryOf(pids: Iterable<number>): Promise<MemoryTotals> {
  const totals: MemoryTotals = { processes: 0, rssKb: 0, pssKb: 0 };
  for (const pid of pids) {
    const m = await memoryOfPid(pid);
    if (!m) continue;
    totals.processes++;
    totals.rssKb += m.rssKb;
    totals.pssKb += m.pssKb;
  }
  return totals;
}

/** What a process is, for a breakdown: the program's name and, for our Node processes, the ocm-lab command. */
export async function processLabel(pid: number): Promise<string> {
  const argv = (await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0').filter(Boolean);
  if (!argv.length) return '?';
  const program = path.basename(argv[0]!);
  const cli = argv.findIndex((a) => a.endsWith('cli/main.js'));
  if (cli >= 0)
    return `ocm-lab ${argv
      .slice(cli + 1)
      .filter((a) => !a.startsWith('-'))
      .slice(0, 2)
      .join(' ')}`.trim();
  const sub = argv.slice(1).find((a) => !a.startsWith('-') && !a.includes('/'));
  return sub && ['registration', 'work', 'registration-operator'].includes(program) ? `${program} ${sub}` : program;
}

/** Resident memory (kB) of every process of a lab (RSS, shared pages counted in each). */
export async function labRssKb(labDirectory: string): Promise<number> {
  return (await memoryOf(await labProcesses(labDirectory))).rssKb;
}
