/** One line of a panel: its points in data units. */
interface PlotSeries {
  name: string;
  points: { x: number; y: number }[];
}

/** One chart: x and y axes in data units, a line per series. */
export interface PlotPanel {
  title: string;
  yLabel: string;
  series: PlotSeries[];
}

const WIDTH = 640;
const PANEL_HEIGHT = 260;
const MARGIN = { left: 70, right: 160, top: 36, bottom: 46 };
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd'];

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** 0, a round step, … up to at least `max`: 1, 2 or 5 times a power of ten, about five ticks. */
export function niceTicks(max: number): number[] {
  if (!(max > 0)) return [0, 1];
  const rough = max / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? 10 * power;
  const ticks: number[] = [];
  for (let v = 0; v < max + step / 2; v += step) ticks.push(Number(v.toPrecision(12)));
  if (ticks[ticks.length - 1]! < max) ticks.push(Number((ticks[ticks.length - 1]! + step).toPrecision(12)));
  return ticks;
}

function panelSvg(panel: PlotPanel, xLabel: string, xTicks: number[], top: number): string {
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = PANEL_HEIGHT - MARGIN.top - MARGIN.bottom;
  const xMax = xTicks[xTicks.length - 1]!;
  const yTicks = niceTicks(Math.max(0, ...panel.series.flatMap((s) => s.points.map((p) => p.y))));
  const yMax = yTicks[yTicks.length - 1]!;
  const px = (x: number) => MARGIN.left + (x / xMax) * plotW;
  const py = (y: number) => top + MARGIN.top + plotH - (y / yMax) * plotH;
  const out: string[] = [];
  out.push(`<text x="${MARGIN.left}" y="${top + 22}" font-size="15" font-weight="bold">${escapeXml(panel.title)}</text>`);
  for (const t of yTicks) {
    out.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${py(t).toFixed(1)}" y2="${py(t).toFixed(1)}" stroke="#ddd"/>`);
    out.push(`<text x="${MARGIN.left - 8}" y="${(py(t) + 4).toFixed(1)}" font-size="11" text-anchor="end">${t}</text>`);
  }
  for (const t of xTicks) {
    out.push(`<line x1="${px(t).toFixed(1)}" x2="${px(t).toFixed(1)}" y1="${top + MARGIN.top}" y2="${top + MARGIN.top + plotH}" stroke="#eee"/>`);
    out.push(`<text x="${px(t).toFixed(1)}" y="${top + MARGIN.top + plotH + 16}" font-size="11" text-anchor="middle">${t}</text>`);
  }
  out.push(`<rect x="${MARGIN.left}" y="${top + MARGIN.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`);
  out.push(`<text x="${MARGIN.left + plotW / 2}" y="${top + PANEL_HEIGHT - 8}" font-size="12" text-anchor="middle">${escapeXml(xLabel)}</text>`);
  const midY = top + MARGIN.top + plotH / 2;
  out.push(`<text x="16" y="${midY}" font-size="12" text-anchor="middle" transform="rotate(-90 16 ${midY})">${escapeXml(panel.yLabel)}</text>`);
  panel.series.forEach((s, i) => {
    const colour = COLOURS[i % COLOURS.length]!;
    const points = [...s.points].sort((a, b) => a.x - b.x);
    out.push(
      `<polyline fill="none" stroke="${colour}" stroke-width="2" points="${points.map((p) => `${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join(' ')}"/>`,
    );
    for (const p of points)
      out.push(
        `<circle cx="${px(p.x).toFixed(1)}" cy="${py(p.y).toFixed(1)}" r="3.5" fill="${colour}">` +
          `<title>${escapeXml(`${s.name}: ${p.y} at ${p.x}`)}</title></circle>`,
      );
    const ly = top + MARGIN.top + 12 + i * 18;
    out.push(`<line x1="${WIDTH - MARGIN.right + 12}" x2="${WIDTH - MARGIN.right + 32}" y1="${ly - 4}" y2="${ly - 4}" stroke="${colour}" stroke-width="2"/>`);
    out.push(`<text x="${WIDTH - MARGIN.right + 38}" y="${ly}" font-size="11">${escapeXml(s.name)}</text>`);
  });
  return out.join('\n');
}

/** Panels stacked vertically over one x axis (same ticks in each), as a standalone SVG document. */
export function stackedLinePlotSvg(panels: PlotPanel[], xLabel: string, xValues: number[]): string {
  const xTicks = [0, ...[...new Set(xValues)].sort((a, b) => a - b)];
  const height = PANEL_HEIGHT * panels.length;
  const body = panels.map((p, i) => panelSvg(p, xLabel, xTicks, i * PANEL_HEIGHT)).join('\n');
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif">\n` +
    `<rect width="100%" height="100%" fill="white"/>\n${body}\n</svg>\n`
  );
}
