/** A few Prometheus counters and gauges, rendered in the text exposition format. */
export class Metrics {
  private readonly values = new Map<string, { help: string; type: 'counter' | 'gauge'; series: Map<string, number> }>();

  constructor(private readonly prefix: string) {}

  define(name: string, type: 'counter' | 'gauge', help: string): void {
    this.values.set(name, { help, type, series: new Map() });
  }

  add(name: string, delta = 1, labels: Record<string, string> = {}): void {
    const m = this.values.get(name);
    if (!m) throw new Error(`metric ${name} is not defined`);
    const key = Object.entries(labels)
      .map(([k, v]) => `${k}="${v.replace(/["\\\n]/g, '_')}"`)
      .join(',');
    m.series.set(key, (m.series.get(key) ?? 0) + delta);
  }

  set(name: string, value: number, labels: Record<string, string> = {}): void {
    const m = this.values.get(name);
    if (!m) throw new Error(`metric ${name} is not defined`);
    const key = Object.entries(labels)
      .map(([k, v]) => `${k}="${v}"`)
      .join(',');
    m.series.set(key, value);
  }

  get(name: string, labels: Record<string, string> = {}): number {
    const key = Object.entries(labels)
      .map(([k, v]) => `${k}="${v}"`)
      .join(',');
    return this.values.get(name)?.series.get(key) ?? 0;
  }

  render(): string {
    const out: string[] = [];
    for (const [name, m] of this.values) {
      const full = `${this.prefix}_${name}`;
      out.push(`# HELP ${full} ${m.help}`, `# TYPE ${full} ${m.type}`);
      if (m.series.size === 0 && m.type === 'gauge') out.push(`${full} 0`);
      for (const [labels, v] of m.series) out.push(`${full}${labels ? `{${labels}}` : ''} ${v}`);
    }
    return `${out.join('\n')}\n`;
  }
}
