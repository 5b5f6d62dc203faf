type OutputFormat = 'text' | 'json';

export interface GlobalOptions {
  config?: string;
  output: OutputFormat;
  verbose: boolean;
}

/** Writes a result either as JSON (for scripts) or through a text renderer (for people). */
export function emit<T>(options: Pick<GlobalOptions, 'output'>, value: T, renderText: (value: T) => string): void {
  if (options.output === 'json') {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  } else {
    const text = renderText(value);
    if (text) process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }
}

/** Renders rows as a kubectl-style table: upper-case headers, columns padded with three spaces. */
export function renderTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('   ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}
