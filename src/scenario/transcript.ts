import fs from 'node:fs/promises';
import path from 'node:path';
import { fenceFor, scanFences, type Fence } from './markdown.js';
import type { Scenario, ScenarioResult, StepResult } from './types.js';

export interface TranscriptContext {
  lab?: string;
  date?: Date;
}

function outputBlock(result: StepResult): string[] {
  const { indent } = result.step;
  const lines: string[] = [];
  if (result.status === 'not-run') return ['', `${indent}> not run: an earlier step failed`];
  const output = result.output.replace(/\r\n?/g, '\n').trimEnd();
  if (output) {
    const fence = fenceFor(output);
    lines.push('', `${indent}${fence}output`, ...output.split('\n').map((l) => (l ? indent + l : l)), `${indent}${fence}`);
  }
  if (result.status === 'failed') {
    const why = (result.failure ?? 'failed').split('\n');
    lines.push(
      '',
      `${indent}> **✖ step failed** (exit status ${result.exitCode === null ? 'none' : result.exitCode}): ${why[0]}`,
      ...why.slice(1).map((l) => `${indent}> ${l}`),
    );
  }
  return lines;
}

/**
 * The document again with the real output of every executed block right under
 * it, as an `output` block (which the parser accepts between a command and
 * its expectations, so a transcript is still a valid document).
 */
export function transcriptMarkdown(scenario: Scenario, result: ScenarioResult, context: TranscriptContext = {}): string {
  const after = new Map<number, string[]>();
  for (const r of result.steps) after.set(r.step.endLine, outputBlock(r));
  const frontEnd = scenario.lines.findIndex((l, i) => i > 0 && l.trim() === '---') + 1;
  const when = (context.date ?? new Date()).toISOString();
  const note = `<!-- transcript: ${result.status}${context.lab ? ` on lab ${context.lab}` : ''}, ${when} -->`;
  const out: string[] = [];
  scenario.lines.forEach((line, i) => {
    out.push(line);
    if (i + 1 === frontEnd) out.push(note);
    out.push(...(after.get(i + 1) ?? []));
  });
  return out.join('\n');
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

const SAFE_URL = /^(https?:\/\/|\.{0,2}\/|#|[\w.-]+(\.md)?(#[\w-]*)?$)/;

/** Inline Markdown a walkthrough uses: `code`, **bold**, [links](url). Everything else is text. */
function inline(text: string): string {
  return text
    .split(/(`[^`]+`)/)
    .map((part) => {
      if (/^`[^`]+`$/.test(part)) return `<code>${escapeHtml(part.slice(1, -1))}</code>`;
      return escapeHtml(part)
        .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
        .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (m: string, label: string, url: string) => (SAFE_URL.test(url) ? `<a href="${url}">${label}</a>` : m));
    })
    .join('');
}

function codeBlock(fence: Fence): string {
  const [word = '', ...rest] = fence.info.split(/\s+/).filter(Boolean);
  const kind =
    word === 'expect'
      ? 'expect'
      : word === 'output'
        ? 'output'
        : ['sh', 'bash', 'shell', 'js', 'javascript'].includes(word) && !rest.includes('norun')
          ? 'command'
          : 'example';
  const caption =
    kind === 'expect'
      ? `expected (${rest.join(' ')})`
      : kind === 'output'
        ? 'output'
        : kind === 'command'
          ? `${word}${rest.length ? ` ${rest.join(' ')}` : ''}`
          : word;
  return (
    `<figure class="${kind}">${caption ? `<figcaption>${escapeHtml(caption)}</figcaption>` : ''}` + `<pre><code>${escapeHtml(fence.body)}</code></pre></figure>`
  );
}

/** A small Markdown rendering: headings, paragraphs, lists, quotes, code blocks (commands, expectations and outputs styled apart). */
function markdownToHtml(lines: readonly string[], start = 0): string {
  const fences = new Map(scanFences(lines, start).map((f) => [f.line - 1, f]));
  const html: string[] = [];
  let para: string[] = [];
  let list: { tag: 'ul' | 'ol'; items: string[] } | null = null;
  let quote: string[] = [];
  const flush = () => {
    if (para.length) html.push(`<p>${inline(para.join(' '))}</p>`);
    if (list) html.push(`<${list.tag}>${list.items.map((i) => `<li>${inline(i)}</li>`).join('')}</${list.tag}>`);
    if (quote.length) html.push(`<blockquote>${inline(quote.join(' '))}</blockquote>`);
    para = [];
    list = null;
    quote = [];
  };
  for (let i = start; i < lines.length; i++) {
    const fence = fences.get(i);
    if (fence) {
      flush();
      html.push(codeBlock(fence));
      i = (fence.endLine ?? lines.length) - 1;
      continue;
    }
    const line = lines[i]!;
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const item = /^\s*(?:([-*+])|\d+[.)])\s+(.*)$/.exec(line);
    const quoted = /^\s*>\s?(.*)$/.exec(line);
    if (!line.trim() || /^\s*<!--.*-->\s*$/.test(line)) {
      flush();
    } else if (heading) {
      flush();
      html.push(`<h${heading[1]!.length}>${inline(heading[2]!)}</h${heading[1]!.length}>`);
    } else if (item) {
      const tag = item[1] ? 'ul' : 'ol';
      if (para.length || quote.length || (list && list.tag !== tag)) flush();
      list ??= { tag, items: [] };
      list.items.push(item[2]!);
    } else if (quoted) {
      if (para.length || list) flush();
      quote.push(quoted[1]!);
    } else if (list && /^\s+\S/.test(line)) {
      list.items[list.items.length - 1] += ` ${line.trim()}`;
    } else {
      if (list || quote.length) flush();
      para.push(line.trim());
    }
  }
  flush();
  return html.join('\n');
}

export const TRANSCRIPT_STYLE = `body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.5;color:#222}
pre{margin:0;padding:.6rem .8rem;overflow:auto;font-size:.9em}figure{margin:1rem 0;border:1px solid #ddd;border-radius:4px}
figcaption{font:600 .75em system-ui,sans-serif;padding:.2rem .8rem;background:#f0f0f0;color:#555}
figure.command pre{background:#f6f8fa}figure.output pre{background:#10151a;color:#e6e6e6}figure.expect pre{background:#f3fbf3}
blockquote{margin:1rem 0;padding:.4rem .8rem;border-left:4px solid #c33;background:#fff4f4}code{font-family:ui-monospace,monospace}
.summary{color:#555}.status{font-weight:600}.status.passed{color:#1a7f37}.status.failed{color:#c33}`;

/** The transcript's body as HTML: the prose, every block, the real output under each command (a page's or a report's part). */
export function transcriptBodyHtml(scenario: Scenario, result: ScenarioResult, context: TranscriptContext = {}): string {
  const lines = transcriptMarkdown(scenario, result, context).split('\n');
  const bodyStart = lines.findIndex((l, i) => i > 0 && l.trim() === '---') + 1;
  return markdownToHtml(lines, bodyStart);
}

/** A self-contained page of the transcript, for a browser. */
export function transcriptHtml(scenario: Scenario, result: ScenarioResult, context: TranscriptContext = {}): string {
  const statusLine = `${scenario.name}: ${result.status}${context.lab ? ` on lab ${context.lab}` : ''}, ${(context.date ?? new Date()).toISOString()}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(scenario.title)}</title><style>${TRANSCRIPT_STYLE}</style></head>
<body>
<h1>${escapeHtml(scenario.title)}</h1>
<p class="summary">${escapeHtml(scenario.summary)}</p>
<p class="status ${result.status}">${escapeHtml(statusLine)}</p>
${transcriptBodyHtml(scenario, result, context)}
</body></html>
`;
}

/** Writes `<dir>/<name>.md` and `<dir>/<name>.html`. */
export async function writeTranscripts(dir: string, scenario: Scenario, result: ScenarioResult, context: TranscriptContext = {}): Promise<string[]> {
  await fs.mkdir(dir, { recursive: true });
  const files = [path.join(dir, `${scenario.name}.md`), path.join(dir, `${scenario.name}.html`)];
  const date = context.date ?? new Date();
  await fs.writeFile(files[0]!, transcriptMarkdown(scenario, result, { ...context, date }));
  await fs.writeFile(files[1]!, transcriptHtml(scenario, result, { ...context, date }));
  return files;
}
