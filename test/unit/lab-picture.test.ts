import fs from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { labPictureSvg, layoutLabPicture, type LabPicture, type Rect } from '../../src/lab/picture.js';
import { xmlProblems } from '../support/xml-check.js';

/** A lab of `spokes` managed clusters: the hub alone in vpc-1, the spokes spread over `vpcs` VPCs; every third one in trouble. */
function lab(spokes: number, vpcs = 1, registry = true): LabPicture {
  const addons = ['cluster-proxy', 'managed-serviceaccount', 'cluster-gateway'];
  const clusters: LabPicture['clusters'] = [
    { name: 'hub', vpc: 'vpc-1', hub: true, apiServer: 'https://10.1.0.10:6443', ready: true, addons: [], tunnel: null },
  ];
  for (let i = 1; i <= spokes; i++) {
    const trouble = i % 3 === 0;
    clusters.push({
      name: `cluster${i}`,
      vpc: `vpc-${2 + ((i - 1) % vpcs)}`,
      hub: false,
      apiServer: `https://10.${2 + ((i - 1) % vpcs)}.0.${10 + i}:6443`,
      ready: !trouble,
      addons: addons.map((name, k) => ({ name, available: trouble && k === 1 ? false : k === 2 && i === 2 ? null : true })),
      tunnel: { healthy: !trouble, latencyMs: trouble ? null : 1.5 + i / 10 },
    });
  }
  return {
    lab: 'default',
    runtime: 'kind',
    exists: true,
    vpcs: Array.from({ length: vpcs + 1 }, (_, i) => ({ name: `vpc-${i + 1}`, subnet: `10.${i + 1}.0.0/16` })),
    clusters,
    hubEndpoint: 'https://10.1.0.10:6443',
    registry: registry ? { host: 'localhost:5001', hostFromClusters: 'ocm-lab-registry:5000', running: true } : null,
    isolation: { enforced: true, reason: null },
  };
}

const overlap = (a: Rect, b: Rect) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
const inside = (a: Rect, b: Rect) => a.x >= b.x && a.y >= b.y && a.x + a.width <= b.x + b.width && a.y + a.height <= b.y + b.height;

function checkLayout(model: LabPicture): void {
  const layout = layoutLabPicture(model);
  const top: Rect[] = [...layout.vpcs, ...(layout.registry ? [layout.registry] : [])];
  for (let i = 0; i < top.length; i++) for (let j = i + 1; j < top.length; j++) expect(overlap(top[i]!, top[j]!), `boxes ${i} and ${j}`).toBe(false);
  const cs = layout.clusters;
  for (let i = 0; i < cs.length; i++) for (let j = i + 1; j < cs.length; j++) expect(overlap(cs[i]!, cs[j]!), `${cs[i]!.name} and ${cs[j]!.name}`).toBe(false);
  for (const c of cs)
    expect(
      inside(
        c,
        layout.vpcs.find((v) => v.name === c.vpc)!,
      ),
      `${c.name} inside ${c.vpc}`,
    ).toBe(true);
  for (const b of [...top, ...cs]) expect(b.x + b.width <= layout.width && b.y + b.height <= layout.height, 'inside the canvas').toBe(true);
  expect(cs.map((c) => c.name).sort()).toEqual(model.clusters.map((c) => c.name).sort());
}

describe('the picture of a lab (status --svg)', () => {
  for (const [spokes, vpcs] of [
    [0, 1],
    [2, 1],
    [19, 1],
    [19, 6],
  ] as const) {
    it(`${spokes + 1} cluster(s) in ${vpcs + 1} VPCs: every cluster and its state, no overlapping boxes, well-formed XML`, () => {
      const model = lab(spokes, vpcs);
      checkLayout(model);
      const svg = labPictureSvg(model);
      expect(xmlProblems(svg)).toEqual([]);
      for (const c of model.clusters) {
        expect(svg).toContain(`data-name="${c.name}"`);
        expect(svg).toMatch(new RegExp(`>${c.name}( \\(hub\\))?</text>\\s*<text[^>]*>${c.ready ? 'Ready' : 'NotReady'}</text>`));
      }
      expect(svg).toContain('endpoint https://10.1.0.10:6443');
      expect(svg).toContain('lab registry (kind)');
      if (spokes) {
        expect(svg).toContain('✔ tunnel 1.6 ms');
        expect(svg).toContain('✔ cluster-proxy');
      }
      if (spokes >= 3) expect(svg).toContain('✘ tunnel unhealthy');
      const layout = layoutLabPicture(model);
      // Readable: no wider than a wide screen, and 20 clusters not in one endless column.
      expect(layout.width).toBeLessThanOrEqual(1600);
      expect(layout.height).toBeLessThanOrEqual(1400);
    });
  }

  it('escapes what a status may hold and stands without a registry or a lab', () => {
    const model = { ...lab(1, 1, false), lab: 'a<b&"c"', exists: false, isolation: { enforced: false, reason: 'loopback <mode> & more' } };
    const svg = labPictureSvg(model);
    expect(xmlProblems(svg)).toEqual([]);
    expect(svg).not.toContain('lab registry');
    expect(svg).toContain('lab a&lt;b&amp;&quot;c&quot; · kind · not up');
    expect(svg).toContain('VPC isolation NOT enforced: loopback &lt;mode&gt; &amp; more');
  });

  it('the committed picture of the default lab is the fixture drawn again (npm run picture)', async () => {
    const fixture = JSON.parse(await fs.readFile('docs/lab-picture.json', 'utf8')) as LabPicture;
    expect(await fs.readFile('docs/lab-picture.svg', 'utf8')).toBe(labPictureSvg(fixture));
  });
});

describe('the XML check itself', () => {
  it('catches what it is for', () => {
    expect(xmlProblems('<a><b></a>')).not.toEqual([]);
    expect(xmlProblems('<a x=1/>')).not.toEqual([]);
    expect(xmlProblems('<a>&nbsp;</a>')).not.toEqual([]);
    expect(xmlProblems('<a>x & y</a>')).not.toEqual([]);
    expect(xmlProblems('<a x="1" x="2"/>')).not.toEqual([]);
    expect(xmlProblems('<a/><b/>')).not.toEqual([]);
    expect(xmlProblems('<a x="1"><!-- c --><b y=\'2\'>&amp;&#10;</b></a>')).toEqual([]);
  });
});
