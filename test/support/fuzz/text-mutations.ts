import { CONTROL_CHARS, unicodeString } from './hostile-values.js';
import type { Rng } from './rng.js';

// Mutations of a document as text and as bytes, blind to what it holds: cut
// short, bytes flipped, random bytes, BOMs, line endings, tabs, control
// characters, huge lines, lines lost or repeated.

/** One generated input: text, or bytes (which the suites write to a file so they are read as the CLI reads them). */
export interface Mutant {
  kind: string;
  input: string | Buffer;
}

export type TextMutation = (rng: Rng, text: string) => Mutant;

function insertAt(text: string, at: number, what: string): string {
  return text.slice(0, at) + what + text.slice(at);
}

function mapLines(text: string, rng: Rng, p: number, f: (line: string) => string): string {
  return text
    .split('\n')
    .map((line) => (rng.chance(p) ? f(line) : line))
    .join('\n');
}

const YAMLISH = ' \n\n\t:-[]{},&*!|>\'"%@`#?~.0123456789abcdefghijklmnopqrstuvwxyz-_/\\';

export const TEXT_MUTATIONS: Record<string, TextMutation> = {
  truncate: (rng, text) => ({ kind: 'truncate', input: text.slice(0, rng.int(text.length)) }),
  'byte-flip': (rng, text) => {
    const bytes = Buffer.from(text, 'utf8');
    for (let i = rng.between(1, 8); i > 0 && bytes.length; i--) bytes[rng.int(bytes.length)] = rng.int(256);
    return { kind: 'byte-flip', input: bytes };
  },
  'random-bytes': (rng) => ({ kind: 'random-bytes', input: rng.bytes(rng.int(2_048)) }),
  'random-yamlish': (rng) => ({ kind: 'random-yamlish', input: Array.from({ length: rng.int(2_000) }, () => YAMLISH[rng.int(YAMLISH.length)]).join('') }),
  bom: (rng, text) => ({
    kind: 'bom',
    input: rng.pick(['\ufeff', '\ufeff\ufeff']) + (rng.chance(0.3) ? insertAt(text, rng.int(text.length), '\ufeff') : text),
  }),
  'bom-bytes': (rng, text) => ({
    kind: 'bom-bytes',
    input: Buffer.concat([
      Buffer.from(
        rng.pick([
          [0xef, 0xbb, 0xbf],
          [0xfe, 0xff],
          [0xff, 0xfe],
          [0xef, 0xbb],
        ]),
      ),
      Buffer.from(text),
    ]),
  }),
  'line-endings': (rng, text) => ({
    kind: 'line-endings',
    input:
      rng.pick(['crlf', 'cr', 'mixed']) === 'crlf'
        ? text.replace(/\n/g, '\r\n')
        : rng.chance(0.5)
          ? text.replace(/\n/g, '\r')
          : mapLines(text, rng, 0.5, (l) => `${l}\r`),
  }),
  tabs: (rng, text) => ({
    kind: 'tabs',
    input: mapLines(text, rng, 0.5, (l) => (rng.chance(0.5) ? l.replace(/^( +)/, (s) => '\t'.repeat(Math.max(1, s.length / 2))) : l.replace(/: /, ':\t'))),
  }),
  'control-chars': (rng, text) => {
    let out = text;
    for (let i = rng.between(1, 6); i > 0; i--) out = insertAt(out, rng.int(out.length + 1), rng.pick(CONTROL_CHARS));
    return { kind: 'control-chars', input: out };
  },
  'nul-bytes': (rng, text) => {
    let out = text;
    for (let i = rng.between(1, 4); i > 0; i--) out = insertAt(out, rng.int(out.length + 1), '\u0000'.repeat(rng.between(1, 64)));
    return { kind: 'nul-bytes', input: out };
  },
  'huge-line': (rng, text) => {
    const lines = text.split('\n');
    const unit = rng.pick(['a', ' ', '#', '-', '`', '~', ':', '- ', '[', '{', '"', '\\']);
    lines.splice(rng.int(lines.length + 1), 0, rng.pick(['', '  ', 'name: ', '# ']) + unit.repeat(rng.between(1_000, 8_000)));
    return { kind: 'huge-line', input: lines.join('\n') };
  },
  unicode: (rng, text) => ({ kind: 'unicode', input: text.replace(/[a-z]/g, (c) => (rng.chance(0.02) ? unicodeString(rng) : c)) }),
  'lines-lost-or-repeated': (rng, text) => {
    const lines = text.split('\n');
    for (let i = rng.between(1, 4); i > 0; i--) {
      const at = rng.int(lines.length);
      const op = rng.int(3);
      if (op === 0) lines.splice(at, 1);
      else if (op === 1) lines.splice(at, 0, lines[rng.int(lines.length)] ?? '');
      else [lines[at], lines[lines.length - 1 - at]] = [lines[lines.length - 1 - at]!, lines[at]!];
    }
    return { kind: 'lines-lost-or-repeated', input: lines.join('\n') };
  },
  splice: (rng, text) => {
    const from = rng.int(text.length);
    return { kind: 'splice', input: insertAt(text, rng.int(text.length + 1), text.slice(from, from + rng.int(400))) };
  },
};
