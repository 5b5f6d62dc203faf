/** A fenced code block of a Markdown document (the only Markdown structure the runner needs). */
export interface Fence {
  /** The info string after the opening marker, trimmed (e.g. `sh timeout=300`). */
  info: string;
  /** Leading spaces of the opening fence; removed from the body lines as Markdown does. */
  indent: string;
  /** The opening marker (``` or ~~~, possibly longer). */
  marker: string;
  body: string;
  /** Opening and closing fence lines, 1-based; endLine is null when the block is never closed. */
  line: number;
  endLine: number | null;
}

const OPEN = /^( *)(`{3,}|~{3,})(.*)$/;
const CLOSE = /^ *(`{3,}|~{3,})\s*$/;

/**
 * Fenced blocks from line index `start` on, following CommonMark's rules that
 * matter here: a block closes at a fence of the same character at least as
 * long as the opening one, with nothing after it; a backtick info string holds
 * no backticks. An unclosed block runs to the end (endLine null).
 */
export function scanFences(lines: readonly string[], start = 0): Fence[] {
  const fences: Fence[] = [];
  for (let i = start; i < lines.length; i++) {
    const open = OPEN.exec(lines[i]!);
    if (!open) continue;
    const [, indent = '', marker = '', rest = ''] = open;
    if (marker[0] === '`' && rest.includes('`')) continue; // inline code such as ```x```, not a fence
    const body: string[] = [];
    let end: number | null = null;
    for (let j = i + 1; j < lines.length; j++) {
      const close = CLOSE.exec(lines[j]!);
      if (close && close[1]![0] === marker[0] && close[1]!.length >= marker.length) {
        end = j;
        break;
      }
      body.push(dedent(lines[j]!, indent.length));
    }
    fences.push({ info: rest.trim(), indent, marker, body: body.join('\n'), line: i + 1, endLine: end === null ? null : end + 1 });
    if (end === null) break;
    i = end;
  }
  return fences;
}

function dedent(line: string, width: number): string {
  let n = 0;
  while (n < width && line[n] === ' ') n++;
  return line.slice(n);
}

/** A fence for `text` that no backtick run inside it can close. */
export function fenceFor(text: string): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((m) => m.length));
  return '`'.repeat(longest + 1);
}
