import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { alive } from '../support/process.js';

describe('test support: alive', () => {
  it('counts a running process as alive, and an exited one whose status nobody collected yet (a zombie) as stopped', async () => {
    // sh starts a child, then becomes `sleep`, which never collects it. The child exits only once its parent is `sleep`
    // (a child that exited earlier could be collected by sh itself): a zombie for as long as sleep runs.
    const parent = execa('sh', ['-c', `sh -c 'until grep -qx sleep /proc/$PPID/comm; do sleep 0.01; done' & echo $!; exec sleep 30`]);
    try {
      const zombie = await new Promise<number>((resolve) => parent.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
      let state = '';
      for (let i = 0; i < 500 && state !== 'Z'; i++) {
        const { stdout } = await execa('ps', ['-o', 'stat=', '-p', String(zombie)], { reject: false });
        state = stdout.trim().slice(0, 1);
        if (state !== 'Z') await new Promise((r) => setTimeout(r, 20));
      }
      expect(state).toBe('Z');
      expect(() => process.kill(zombie, 0)).not.toThrow();
      expect(alive(zombie)).toBe(false);
      expect(alive(parent.pid!)).toBe(true);
    } finally {
      parent.kill('SIGKILL');
      await parent.catch(() => undefined);
    }
    expect(alive(parent.pid!)).toBe(false);
  });
});
