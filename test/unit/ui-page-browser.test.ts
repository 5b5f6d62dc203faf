import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUiServer, type UiServer } from '../../src/cli/ui-server.js';
import { openHeadlessPage, type HeadlessPage } from '../support/headless-chromium.js';
import { waitUntil } from '../support/wait.js';

// `ocm-lab ui`'s page in a real headless Chromium, with sources of its own (no lab): the page's script
// draws the picture, the documents and the events, and follows a change without a reload. The same page on a
// real lab, with a cluster added live: test/e2e/cluster-add-remove.test.ts.

let clusters = ['hub', 'cluster1'];
let server: UiServer;
let page: HeadlessPage | undefined;

beforeAll(async () => {
  server = await startUiServer({
    picture: async () =>
      `<svg xmlns="http://www.w3.org/2000/svg">${clusters.map((c, i) => `<text id="c-${c}" y="${20 * (i + 1)}">${c}</text>`).join('')}</svg>`,
    documents: async () => [{ name: 'alpha', title: 'Alpha <walk>', summary: 's', transcript: true }],
    transcript: async () => null,
    events: async () => ({ hub: [{ time: '2026-01-01T00:00:00Z', type: 'Warning', reason: 'BackOff', object: 'Pod default/x', message: '<b>not bold</b>' }] }),
  });
  page = await openHeadlessPage(server.url);
}, 60_000);
afterAll(async () => {
  await page?.close();
  await server?.close();
});

describe('ocm-lab ui in a browser', () => {
  it('draws the picture, the documents (escaped) and the events, then follows a new cluster without a reload', async () => {
    const p = page!;
    await waitUntil(
      async () => ((await p.evaluate<boolean>("!!document.querySelector('#picture #c-cluster1')")) ? true : undefined),
      'the first picture',
      20_000,
      200,
    );
    expect(await p.evaluate<string>("document.querySelector('#documents').textContent")).toContain('Alpha <walk>');
    expect(await p.evaluate<number>("document.querySelectorAll('#events b').length")).toBe(0);
    expect(await p.evaluate<string>("document.querySelector('#events tr.Warning').textContent")).toContain('<b>not bold</b>');
    await p.evaluate('window.__sameDocument = true');
    clusters = [...clusters, 'cluster3'];
    // The page polls every 5 s.
    await waitUntil(
      async () => ((await p.evaluate<boolean>("!!document.querySelector('#picture #c-cluster3')")) ? true : undefined),
      'cluster3 on the page',
      20_000,
      250,
    );
    expect(await p.evaluate<boolean>('window.__sameDocument === true')).toBe(true);
    const png = await p.screenshot();
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
  }, 60_000);
});
