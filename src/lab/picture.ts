/**
 * A picture of a lab as SVG: the VPCs as boxes, each cluster in its VPC with its API address and
 * state, the hub's endpoint, the addons per cluster with their availability, the cluster-proxy
 * tunnels with their probed health and latency, and the lab registry on kind. Pure functions of a
 * model (`status --svg` gathers it; a JSON fixture redraws docs/lab-picture.svg), hand-written SVG.
 */

interface PictureAddon {
  name: string;
  /** The addon's Available condition on this cluster; null when it was not read. */
  available: boolean | null;
}

export interface PictureCluster {
  name: string;
  vpc: string;
  hub: boolean;
  /** The API server as this machine reaches it. */
  apiServer: string;
  ready: boolean;
  addons: PictureAddon[];
  /** The cluster-proxy tunnel to this managed cluster, probed (`proxy health`); null when there is none or it was not probed. */
  tunnel: { healthy: boolean; latencyMs: number | null } | null;
}

export interface LabPicture {
  lab: string;
  runtime: string;
  exists: boolean;
  vpcs: { name: string; subnet: string | null }[];
  clusters: PictureCluster[];
  /** The hub's API server as the managed clusters reach it; null when unknown. */
  hubEndpoint: string | null;
  /** kind: the registry the lab's nodes pull from. */
  registry: { host: string; hostFromClusters: string; running: boolean } | null;
  isolation: { enforced: boolean; reason: string | null };
}

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface PictureLayout {
  width: number;
  height: number;
  vpcs: (Rect & { name: string })[];
  clusters: (Rect & { name: string; vpc: string })[];
  registry: Rect | null;
}

const MARGIN = 20;
const TITLE_H = 44;
const CLUSTER_W = 250;
const LINE = 15;
const PAD = 10;
const VPC_HEADER = 24;
const GAP = 28;
/** Rows of VPCs wrap at this width (the hub's row may be wider). */
const MAX_ROW_W = 1280;
/** Characters of 11 px monospace that fit in a cluster box. */
const FIT = Math.floor((CLUSTER_W - 2 * PAD) / 6.7);

function clusterLines(c: PictureCluster, model: LabPicture): number {
  return 1 + (c.hub && model.hubEndpoint ? 1 : 0) + c.addons.length + (c.tunnel ? 1 : 0);
}

const clusterHeight = (c: PictureCluster, model: LabPicture) => 26 + LINE * clusterLines(c, model) + 6;

/** Clusters of a VPC in a grid: one column up to 3, then up to 5 columns of about 4 rows. */
function vpcGrid(clusters: PictureCluster[], model: LabPicture): { columns: number; rowHeights: number[] } {
  const columns = clusters.length <= 3 ? 1 : Math.min(5, Math.ceil(clusters.length / 4));
  const rowHeights: number[] = [];
  clusters.forEach((c, i) => {
    const row = Math.floor(i / columns);
    rowHeights[row] = Math.max(rowHeights[row] ?? 0, clusterHeight(c, model));
  });
  return { columns, rowHeights };
}

/** The VPCs that hold clusters, in the model's order, the hub's first; a VPC named only by clusters is added. */
function vpcOrder(model: LabPicture): string[] {
  const names = [...model.vpcs.map((v) => v.name), ...model.clusters.map((c) => c.vpc)].filter((n, i, all) => all.indexOf(n) === i);
  const hubVpc = model.clusters.find((c) => c.hub)?.vpc;
  return [...names.filter((n) => n === hubVpc), ...names.filter((n) => n !== hubVpc)];
}

/** Where every box goes: the hub's VPC (and the registry) on the first row, the other VPCs in rows under it. */
export function layoutLabPicture(model: LabPicture): PictureLayout {
  const layout: PictureLayout = { width: 0, height: 0, vpcs: [], clusters: [], registry: null };
  let x = MARGIN;
  let y = MARGIN + TITLE_H;
  let rowHeight = 0;
  const hubVpc = model.clusters.find((c) => c.hub)?.vpc;
  for (const name of vpcOrder(model)) {
    const members = model.clusters.filter((c) => c.vpc === name);
    const { columns, rowHeights } = vpcGrid(members, model);
    const width = PAD + Math.max(1, Math.min(columns, members.length)) * (CLUSTER_W + PAD);
    const height = VPC_HEADER + rowHeights.reduce((a, b) => a + b + PAD, 0) + (members.length ? 0 : 20) + PAD;
    const firstRow = layout.vpcs.length === 0;
    if (!firstRow && (x + width > MAX_ROW_W || layout.vpcs[layout.vpcs.length - 1]!.name === hubVpc)) {
      x = MARGIN;
      y += rowHeight + GAP;
      rowHeight = 0;
    }
    layout.vpcs.push({ name, x, y, width, height });
    members.forEach((c, i) => {
      const row = Math.floor(i / columns);
      const cy = y + VPC_HEADER + rowHeights.slice(0, row).reduce((a, b) => a + b + PAD, 0);
      layout.clusters.push({
        name: c.name,
        vpc: name,
        x: x + PAD + (i % columns) * (CLUSTER_W + PAD),
        y: cy,
        width: CLUSTER_W,
        height: clusterHeight(c, model),
      });
    });
    if (firstRow && model.registry) {
      layout.registry = { x: x + width + GAP, y, width: CLUSTER_W, height: 26 + LINE * 3 + 6 };
      x += CLUSTER_W + GAP;
      rowHeight = Math.max(rowHeight, layout.registry.height);
    }
    x += width + GAP;
    rowHeight = Math.max(rowHeight, height);
  }
  const boxes: Rect[] = [...layout.vpcs, ...(layout.registry ? [layout.registry] : [])];
  layout.width = Math.max(480, ...boxes.map((b) => b.x + b.width + MARGIN));
  layout.height = Math.max(y + rowHeight, ...boxes.map((b) => b.y + b.height)) + MARGIN + 20;
  return layout;
}

// Characters XML 1.0 cannot hold (a status may quote any byte).
// eslint-disable-next-line no-control-regex
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;

const escapeXml = (s: string) => s.replace(NOT_XML, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const fit = (s: string, n = FIT) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

function rect(box: Rect, attrs: string): string {
  return `<rect x="${box.x}" y="${box.y}" width="${box.width}" height="${box.height}" ${attrs}/>`;
}

function text(x: number, y: number, content: string, attrs = ''): string {
  return `<text x="${x}" y="${y}"${attrs ? ` ${attrs}` : ''}>${escapeXml(content)}</text>`;
}

const GREEN = '#2e7d32';
const RED = '#c62828';
const GREY = '#757575';

const mark = (ok: boolean | null) => (ok === null ? { sign: '?', colour: GREY } : ok ? { sign: '✔', colour: GREEN } : { sign: '✘', colour: RED });

function clusterSvg(c: PictureCluster, box: Rect, model: LabPicture): string {
  const out: string[] = [];
  const colour = c.ready ? GREEN : RED;
  out.push(
    `<g class="cluster" data-name="${escapeXml(c.name)}"><title>${escapeXml(`${c.name}: ${c.ready ? 'Ready' : 'not ready'}`)}</title>`,
    rect(box, `rx="6" fill="white" stroke="${colour}" stroke-width="${c.hub ? 2.5 : 1.5}"`),
    text(box.x + PAD, box.y + 18, fit(`${c.name}${c.hub && c.name !== 'hub' ? ' (hub)' : ''}`, FIT - 10), 'font-weight="bold" font-size="13"'),
    text(box.x + box.width - PAD, box.y + 18, c.ready ? 'Ready' : 'NotReady', `font-size="11" text-anchor="end" fill="${colour}"`),
  );
  let y = box.y + 26 + 11;
  const line = (content: string, attrs = '') => {
    out.push(text(box.x + PAD, y, fit(content), `font-size="11" font-family="monospace"${attrs ? ` ${attrs}` : ''}`));
    y += LINE;
  };
  line(`api ${c.apiServer}`);
  if (c.hub && model.hubEndpoint) line(`endpoint ${model.hubEndpoint}`);
  for (const a of c.addons) {
    const m = mark(a.available);
    line(`${m.sign} ${a.name}`, `fill="${m.colour}"`);
  }
  if (c.tunnel) {
    const m = mark(c.tunnel.healthy);
    const latency = c.tunnel.healthy && c.tunnel.latencyMs !== null ? ` ${c.tunnel.latencyMs.toFixed(1)} ms` : c.tunnel.healthy ? '' : ' unhealthy';
    line(`${m.sign} tunnel${latency}`, `fill="${m.colour}"`);
  }
  out.push('</g>');
  return out.join('\n');
}

/** The tunnels of a VPC's managed clusters: how many were probed and how many answered. */
function vpcTunnels(model: LabPicture, vpc: string): { probed: number; healthy: number } {
  const tunnels = model.clusters.filter((c) => c.vpc === vpc && !c.hub && c.tunnel).map((c) => c.tunnel!);
  return { probed: tunnels.length, healthy: tunnels.filter((t) => t.healthy).length };
}

/**
 * The tunnels as one line from each VPC of managed clusters to the hub (each cluster's box says how
 * its own tunnel answered): one line per cluster would cross every box of a 20-cluster lab.
 */
function tunnelLines(model: LabPicture, layout: PictureLayout): string[] {
  const hubCluster = model.clusters.find((c) => c.hub);
  const hub = layout.clusters.find((b) => b.name === hubCluster?.name);
  if (!hub || !hubCluster) return [];
  return layout.vpcs
    .filter((v) => v.name !== hubCluster.vpc && vpcTunnels(model, v.name).probed > 0)
    .map((v) => {
      const { probed, healthy } = vpcTunnels(model, v.name);
      const colour = healthy === probed ? GREEN : RED;
      const [x1, y1] = [v.x + v.width / 2, v.y];
      const [x2, y2] = [hub.x + hub.width / 2, hub.y + hub.height];
      const dash = healthy === probed ? '' : ' stroke-dasharray="6 4"';
      return `<line x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}" stroke="${colour}" stroke-width="2" stroke-opacity="0.6"${dash}/>`;
    });
}

function registrySvg(model: LabPicture, box: Rect): string {
  const r = model.registry!;
  return [
    `<g class="registry">${rect(box, 'rx="6" fill="#fffaf0" stroke="#b26a00" stroke-width="1.5"')}`,
    text(box.x + PAD, box.y + 18, 'lab registry (kind)', 'font-weight="bold" font-size="13"'),
    text(box.x + box.width - PAD, box.y + 18, r.running ? 'running' : 'stopped', `font-size="11" text-anchor="end" fill="${r.running ? GREEN : RED}"`),
    text(box.x + PAD, box.y + 37, fit(`push ${r.host}`), 'font-size="11" font-family="monospace"'),
    text(box.x + PAD, box.y + 37 + LINE, fit(`pull ${r.hostFromClusters}`), 'font-size="11" font-family="monospace"'),
    text(box.x + PAD, box.y + 37 + 2 * LINE, 'shared by the kind labs', `font-size="11" fill="${GREY}"`),
    '</g>',
  ].join('\n');
}

function vpcTunnelLabel(model: LabPicture, v: Rect & { name: string }): string[] {
  const { probed, healthy } = vpcTunnels(model, v.name);
  if (!probed) return [];
  const colour = healthy === probed ? GREEN : RED;
  return [text(v.x + v.width - PAD, v.y + 16, `tunnels ${healthy}/${probed} healthy`, `font-size="11" text-anchor="end" fill="${colour}"`)];
}

/** The picture as a standalone SVG document. */
export function labPictureSvg(model: LabPicture): string {
  const layout = layoutLabPicture(model);
  const out: string[] = [];
  const ready = model.clusters.filter((c) => c.ready).length;
  const title = `lab ${model.lab} · ${model.runtime} · ${model.exists ? `${ready}/${model.clusters.length} clusters Ready` : 'not up'}`;
  const isolation = model.isolation.enforced
    ? 'VPC isolation enforced'
    : `VPC isolation NOT enforced${model.isolation.reason ? `: ${model.isolation.reason}` : ''}`;
  out.push(text(MARGIN, MARGIN + 16, title, 'font-size="16" font-weight="bold"'));
  out.push(text(MARGIN, MARGIN + 34, fit(isolation, 150), `font-size="12" fill="${model.isolation.enforced ? GREEN : RED}"`));
  // Under the boxes: a line to a VPC two rows down passes behind the VPC between.
  out.push(...tunnelLines(model, layout));
  for (const v of layout.vpcs) {
    const subnet = model.vpcs.find((x) => x.name === v.name)?.subnet;
    out.push(
      `<g class="vpc" data-name="${escapeXml(v.name)}">${rect(v, 'rx="8" fill="#f3f6fc" stroke="#5c7cba" stroke-dasharray="6 3"')}`,
      text(v.x + PAD, v.y + 16, `${v.name}${subnet ? ` ${subnet}` : ''}`, 'font-size="12" fill="#3a5a9a" font-weight="bold"'),
      ...vpcTunnelLabel(model, v),
      '</g>',
    );
  }
  for (const box of layout.clusters)
    out.push(
      clusterSvg(
        model.clusters.find((c) => c.name === box.name)!,
        box,
        model,
      ),
    );
  if (layout.registry) out.push(registrySvg(model, layout.registry));
  const legend = '✔ available or healthy · ✘ not · ? not read · lines: the cluster-proxy tunnels of a VPC to the hub';
  out.push(text(MARGIN, layout.height - MARGIN + 4, legend, `font-size="11" fill="${GREY}"`));
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${layout.width}" height="${layout.height}" viewBox="0 0 ${layout.width} ${layout.height}" ` +
    `font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n${out.join('\n')}\n</svg>\n`
  );
}
