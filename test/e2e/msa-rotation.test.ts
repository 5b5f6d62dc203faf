import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { kubectl } from '../support/lab.js';
import { awaitRequestsAfter, rotatingToken, rotationDir, stopRotationTraffic } from '../support/msa-rotation.js';
import { useSharedLab } from '../support/test-lab.js';
import { waitUntil } from '../support/wait.js';

/** A service-account token's claims (a JWT's middle part). */
function claims(token: string): { iat: number; exp: number } {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { iat: number; exp: number };
}

/**
 * managed-serviceaccount's token rotation under load, on the shared default lab. The token and its traffic start
 * with the lab (test/support/shared-shapes.ts), so the 8 minutes until the agent's refresh pass while the other
 * files run; this file runs late (test/support/shared-lab-sequencer.ts) and waits only for what is left.
 */
describe('managed-serviceaccount: a 10-minute token rotated under load', () => {
  const lab = useSharedLab('default', 'test/e2e/msa-rotation.test.ts');

  it(
    'rotates a 10-minute token before it expires, with no failed request through proxy kubectl across the rotation',
    async () => {
      const first = await fs.readFile(path.join(rotationDir(lab), 'first-token'), 'utf8');
      const rotated = await waitUntil(
        async () => {
          const t = await rotatingToken(lab);
          return t && t !== first ? t : undefined;
        },
        'the token of MSA rotating to be replaced',
        11 * 60_000,
        2_000,
      );
      // Replaced before the first token expired (the new token was issued before the first one's expiry), and the new one is valid.
      expect(claims(rotated).iat).toBeLessThan(claims(first).exp);
      const review = await kubectl(
        lab.kubeconfig,
        ['--context', 'cluster1', 'create', '-o', 'json', '-f', '-'],
        JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: rotated } }),
      );
      expect(review.exitCode, review.stderr).toBe(0);
      expect((JSON.parse(review.stdout) as { status: { authenticated: boolean } }).status.authenticated).toBe(true);
      // Let requests run on the new token for a while (when this file runs soon after the rotation), then look at all of them.
      const issued = claims(rotated).iat * 1000;
      await awaitRequestsAfter(lab, issued + 1_000, 10);
      const { runs, failures, times } = await stopRotationTraffic(lab);
      expect(failures).toEqual([]);
      expect(runs).toBeGreaterThan(50);
      // The traffic spanned the rotation: requests on the first token and on the new one.
      expect(times.filter((t) => t < issued).length).toBeGreaterThan(10);
      expect(times.filter((t) => t > issued + 1_000).length).toBeGreaterThanOrEqual(10);
    },
    15 * 60_000,
  );
});
