import { CONTROL_CHARS, hostileString, unicodeString } from './hostile-values.js';
import type { Rng } from './rng.js';
import type { Mutant } from './text-mutations.js';
import { DATA_MUTATIONS, YAML_TEXT_MUTATIONS, aliasBomb, deepCompactSeq, readData } from './yaml-mutations.js';

// Mutations of a scenario document's structure: its fences (lost, unclosed,
// nested, re-marked, re-indented, hostile info strings), its expectation
// blocks (moved, emptied, bad regular expressions), its front matter (as data
// and as YAML text, its --- delimiters) and its headings.

const OPENER = /^ *(`{3,}|~{3,})\S/;
const CLOSER = /^ *(`{3,}|~{3,})\s*$/;

interface Block {
  open: number;
  close: number;
  info: string;
}

/** Fenced blocks as the document's lines pair them (good enough to aim mutations at; the parser decides). */
function blocks(lines: readonly string[]): Block[] {
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = OPENER.exec(lines[i]!);
    if (!open) continue;
    const marker = open[1]!;
    let close = i + 1;
    while (close < lines.length && !(CLOSER.test(lines[close]!) && lines[close]!.trim().startsWith(marker))) close++;
    if (close >= lines.length) break;
    out.push({ open: i, close, info: lines[i]!.trim().slice(marker.length) });
    i = close;
  }
  return out;
}

/** Index of the closing --- of the front matter, or -1. */
function frontMatterEnd(lines: readonly string[]): number {
  return lines.findIndex((l, i) => i > 0 && l.trim() === '---');
}

const HOSTILE_INFO = [
  'sh',
  'js',
  'bash',
  'SH',
  'sh timeout=0',
  'sh timeout=3601',
  'sh timeout=-1',
  'sh timeout=',
  'sh timeout=1e3',
  'sh timeout=99999999999999999999999999',
  'sh timeout=5 timeout=6',
  'sh cleanup cleanup',
  'sh norun cleanup',
  'sh cleanup=1',
  'constructor',
  '__proto__',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'expect',
  'expect contains',
  'expect matches',
  'expect row',
  'expect fails',
  'expect fails extra',
  'expect constructor',
  'expect __proto__',
  'expect contains contains',
  'output',
  'output sh',
  'sh`',
  '`sh`',
  'sh\u0000',
  'sh \u001b[2J',
  'sh \u202eevil',
  'sh\t\tcleanup',
];

function hostileInfo(rng: Rng): string {
  const r = rng.int(10);
  if (r < 7) return rng.pick(HOSTILE_INFO);
  if (r < 8) return `sh ${hostileString(rng).replace(/\n/g, ' ')}`;
  if (r < 9) return unicodeString(rng);
  return `sh ${'x'.repeat(rng.between(100, 5_000))}`;
}

const HOSTILE_EXPECT_BODY = [
  '',
  '   ',
  '(',
  '[',
  '*',
  '\\',
  '(?<',
  '(a+)+$',
  '(?=x)*',
  'a{99999999999}',
  `${'('.repeat(3_000)}${')'.repeat(3_000)}`,
  '\u0000',
  'x'.repeat(20_000),
  'NAME  READY\n',
  '\n\n\n',
  '```',
  '~~~',
];

const HEADINGS = [
  '#',
  '# ',
  '#'.repeat(7) + ' too deep',
  '# ```sh',
  '# ~~~',
  '#\u0000',
  '# ---',
  '---',
  '===',
  `# ${'h'.repeat(20_000)}`,
  '# title: x',
  '#!/bin/sh',
];

export type ScenarioMutation = (rng: Rng, lines: string[]) => void;

export const SCENARIO_MUTATIONS: Record<string, ScenarioMutation> = {
  'fence-unclosed': (rng, lines) => {
    const all = blocks(lines);
    if (all.length) lines.splice(rng.pick(all).close, 1);
  },
  'fence-opener-lost': (rng, lines) => {
    const all = blocks(lines);
    if (all.length) lines.splice(rng.pick(all).open, 1);
  },
  'fence-nested': (rng, lines) => {
    const all = blocks(lines);
    if (!all.length) return;
    const b = rng.pick(all);
    const at = rng.between(b.open + 1, b.close);
    const inner = rng.pick(['```', '````', '~~~', '```sh', '```expect contains', '~~~~js']);
    lines.splice(at, 0, ...(rng.chance(0.5) ? [inner, 'echo nested', inner.replace(/[a-z ].*$/, '')] : [inner]));
  },
  'fence-marker': (rng, lines) => {
    const all = blocks(lines);
    if (!all.length) return;
    const b = rng.pick(all);
    const which = rng.chance(0.5) ? b.open : b.close;
    const line = lines[which]!;
    lines[which] = rng.pick([
      line.replace(/`{3,}/, '~~~').replace(/~{3,}/, '```'),
      line.replace(/(`{3,}|~{3,})/, (m) => m.slice(0, 2)),
      line.replace(/(`{3,}|~{3,})/, (m) => m + m[0]!.repeat(rng.between(1, 5))),
      `${line} trailing`,
      `${line}\u0000`,
      line.replace(/(`{3,}|~{3,})/, (m) => m[0]!.repeat(rng.between(3, 20_000))),
    ]);
  },
  'fence-info': (rng, lines) => {
    const all = blocks(lines);
    if (!all.length) return;
    const b = rng.pick(all);
    const marker = /^( *)(`{3,}|~{3,})/.exec(lines[b.open]!)!;
    lines[b.open] = `${marker[1]}${marker[2]}${hostileInfo(rng)}`;
  },
  'fence-indent': (rng, lines) => {
    const all = blocks(lines);
    if (!all.length) return;
    const b = rng.pick(all);
    const indent = rng.pick(['', ' ', '   ', '    ', '\t', ' '.repeat(12)]);
    for (const i of rng.chance(0.5) ? [b.open] : [b.open, b.close]) lines[i] = indent + lines[i]!.trimStart();
  },
  'expect-moved': (rng, lines) => {
    const expects = blocks(lines).filter((b) => b.info.startsWith('expect'));
    if (!expects.length) return;
    const b = rng.pick(expects);
    const moved = lines.splice(b.open, b.close - b.open + 1);
    const end = frontMatterEnd(lines);
    lines.splice(rng.pick([end + 1, lines.length, Math.max(end + 1, b.open - rng.between(1, 20))]), 0, ...moved);
  },
  'expect-body': (rng, lines) => {
    const expects = blocks(lines).filter((b) => b.info.startsWith('expect'));
    if (!expects.length) return;
    const b = rng.pick(expects);
    lines.splice(b.open + 1, b.close - b.open - 1, ...rng.pick(HOSTILE_EXPECT_BODY).split('\n'));
    if (rng.chance(0.3)) lines[b.open] = lines[b.open]!.replace(/expect \w+/, rng.pick(['expect matches', 'expect row', 'expect fails', 'expect contains']));
  },
  'front-matter-data': (rng, lines) => {
    const end = frontMatterEnd(lines);
    if (end < 0) return;
    let data: unknown;
    try {
      data = readData(lines.slice(1, end).join('\n'));
    } catch {
      return; // an earlier mutation left it unreadable as data
    }
    const text = DATA_MUTATIONS[rng.pick(Object.keys(DATA_MUTATIONS))]!(rng, data);
    lines.splice(1, end - 1, ...text.replace(/\n$/, '').split('\n'));
  },
  'front-matter-yaml-text': (rng, lines) => {
    const end = frontMatterEnd(lines);
    if (end < 0) return;
    const front = lines.slice(1, end);
    YAML_TEXT_MUTATIONS[rng.pick(Object.keys(YAML_TEXT_MUTATIONS).filter((k) => k !== 'more-documents'))]!(rng, front);
    lines.splice(1, end - 1, ...front);
  },
  'front-matter-delimiters': (rng, lines) => {
    const end = frontMatterEnd(lines);
    const r = rng.int(6);
    if (r === 0) lines.shift();
    else if (r === 1 && end > 0) lines.splice(end, 1);
    else if (r === 2) lines[0] = rng.pick(['----', '--- ', ' ---', '...', '\ufeff---', '---\u0000', '+++']);
    else if (r === 3) lines.unshift('---', rng.pick(['title: first', '', 'x: [']), '---', '');
    else if (r === 4) lines.splice(1, Math.max(0, end - 1));
    else lines.splice(0, 0, '');
  },
  heading: (rng, lines) => {
    const headings = lines.flatMap((l, i) => (l.startsWith('#') ? [i] : []));
    const heading = rng.pick(HEADINGS);
    if (headings.length && rng.chance(0.6)) lines[rng.pick(headings)] = heading;
    else lines.splice(rng.int(lines.length + 1), 0, heading);
  },
  'control-in-block': (rng, lines) => {
    const all = blocks(lines);
    if (!all.length) return;
    const b = rng.pick(all);
    const at = rng.between(b.open, b.close);
    lines[at] = lines[at]! + rng.pick(CONTROL_CHARS);
  },
};

export function applyScenario(rng: Rng, kind: string, text: string): Mutant {
  const lines = text.split('\n');
  SCENARIO_MUTATIONS[kind]!(rng, lines);
  return { kind, input: lines.join('\n') };
}

/** A front matter whose YAML would exhaust the reader: an alias bomb, or nesting past the stack. */
export function hostileFrontMatter(kind: 'alias-bomb' | 'deep-nesting' | 'self-alias'): string {
  if (kind === 'alias-bomb') return [...aliasBomb(10, 10), 'title: T', 'summary: S'].join('\n');
  if (kind === 'self-alias') return 'title: &t [*t]\nsummary: S';
  return `title: T\nsummary: S\nrequires:\n  clusters:\n    ${deepCompactSeq(3_500)}`;
}
