import { execa } from 'execa';

/** kind needs more inotify instances and watches than Debian's defaults. */
const KIND_SYSCTLS = { 'fs.inotify.max_user_watches': 524288, 'fs.inotify.max_user_instances': 512 };

/** Raises the inotify limits kind needs (never lowers one); the returned function puts back what was there. */
export async function raiseKindSysctls(): Promise<() => Promise<void>> {
  const before = new Map<string, string>();
  for (const [key, want] of Object.entries(KIND_SYSCTLS)) {
    const now = (await execa('sysctl', ['-n', key])).stdout.trim();
    before.set(key, now);
    if (Number(now) < want) await execa('sysctl', ['-qw', `${key}=${want}`]);
  }
  return async () => {
    for (const [key, value] of before) await execa('sysctl', ['-qw', `${key}=${value}`]).catch(() => undefined);
  };
}
