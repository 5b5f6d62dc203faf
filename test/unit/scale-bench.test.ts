import { describe, expect, it } from 'vitest';
import { parseSmapsRollup } from '../../src/bench/lab-memory.js';
import { scaleLabConfig } from '../../src/bench/scale.js';
import { niceTicks, stackedLinePlotSvg } from '../../src/bench/svg-plot.js';
import { parseLabConfig, renderLabConfig } from '../../src/config/index.js';
import { addonVocabulary } from '../../src/addons/registry.js';

describe('scale bench: its labs and its plot', () => {
  it.each([1, 2, 5, 20])('%i spokes: a lab file the CLI accepts, one hub, spokes over vpc-2 and vpc-3', (n) => {
    const config = scaleLabConfig(n);
    const parsed = parseLabConfig(renderLabConfig(config), '/tmp/scale.yaml', addonVocabulary());
    expect(parsed.clusters.filter((c) => c.hub)).toHaveLength(1);
    expect(parsed.clusters).toHaveLength(n + 1);
    expect(new Set(parsed.clusters.filter((c) => !c.hub).map((c) => c.vpc))).toEqual(new Set(n > 1 ? ['vpc-2', 'vpc-3'] : ['vpc-2']));
  });

  it('memory: Rss and Pss from a smaps_rollup text, null when either is missing', () => {
    const rollup =
      '55d0c0000000-7ffc00000000 ---p 00000000 00:00 0    [rollup]\nRss:              112348 kB\nPss:               61234 kB\nPss_Anon:          50000 kB\n';
    expect(parseSmapsRollup(rollup)).toEqual({ rssKb: 112348, pssKb: 61234 });
    expect(parseSmapsRollup('Rss:              112348 kB\n')).toBeNull();
    expect(parseSmapsRollup('')).toBeNull();
  });

  it('ticks: 0 and round steps up to at least the maximum', () => {
    expect(niceTicks(237.8)).toEqual([0, 50, 100, 150, 200, 250]);
    expect(niceTicks(10.37)).toEqual([0, 5, 10, 15]);
    expect(niceTicks(0)).toEqual([0, 1]);
  });

  it('the SVG: one point per value, labels escaped, every element closed', () => {
    const svg = stackedLinePlotSvg(
      [
        {
          title: 'up <time>',
          yLabel: 's',
          series: [
            {
              name: 'up',
              points: [
                { x: 1, y: 27 },
                { x: 20, y: 238 },
              ],
            },
          ],
        },
        {
          title: 'memory',
          yLabel: 'GiB',
          series: [
            {
              name: 'PSS & RSS',
              points: [
                { x: 1, y: 1.7 },
                { x: 20, y: 10.4 },
              ],
            },
          ],
        },
      ],
      'spokes',
      [1, 20],
    );
    expect(svg.match(/<circle /g)).toHaveLength(4);
    expect(svg).toContain('up &lt;time&gt;');
    expect(svg).toContain('PSS &amp; RSS');
    const opened = (svg.match(/<(svg|text|title|circle)\b/g) ?? []).length;
    const closed = (svg.match(/<\/(svg|text|title|circle)>/g) ?? []).length;
    expect(closed).toBe(opened);
  });
});
