import YAML from 'yaml';
import { hostileKey, hostileValue } from './hostile-values.js';
import type { Rng } from './rng.js';
import type { Mutant } from './text-mutations.js';

// Mutations of a YAML document: on its data (a field deleted, duplicated,
// renamed or of the wrong type, then written out again in a random style) and
// on its text where only text can say it (anchors and aliases, an alias bomb,
// duplicate keys, deep nesting, tags, directives, more documents).

type Container = Record<string, unknown> | unknown[];
interface Slot {
  parent: Container;
  key: string | number;
}

/** Every place a value sits in `root`, parents before children. */
function slots(root: unknown): Slot[] {
  const out: Slot[] = [];
  const walk = (node: unknown) => {
    if (node === null || typeof node !== 'object') return;
    // Only arrays and maps hold slots: a `!!binary` scalar parses to a Uint8Array, whose indices cannot be deleted.
    if (!Array.isArray(node) && Object.getPrototypeOf(node) !== Object.prototype) return;
    const entries: [string | number, unknown][] = Array.isArray(node) ? node.map((v, i) => [i, v]) : Object.entries(node);
    for (const [key, value] of entries) {
      out.push({ parent: node as Container, key });
      walk(value);
    }
  };
  walk(root);
  return out;
}

function get(slot: Slot): unknown {
  return (slot.parent as Record<string | number, unknown>)[slot.key];
}

function set(slot: Slot, value: unknown): void {
  (slot.parent as Record<string | number, unknown>)[slot.key] = value;
}

function remove(slot: Slot): void {
  if (Array.isArray(slot.parent)) slot.parent.splice(slot.key as number, 1);
  else delete slot.parent[slot.key as string];
}

function typo(rng: Rng, key: string): string {
  if (!key) return 'x';
  const at = rng.int(key.length);
  switch (rng.int(4)) {
    case 0:
      return key.toUpperCase();
    case 1:
      return key.slice(0, at) + key.slice(at + 1);
    case 2:
      return key.slice(0, at) + key[at] + key.slice(at);
    default:
      return `${key}s`;
  }
}

/** YAML text of `data` in a random style (block or flow, indents, line widths). */
function writeYaml(rng: Rng, data: unknown): string {
  const options: YAML.ToStringOptions & YAML.DocumentOptions & YAML.CreateNodeOptions = {
    indent: rng.pick([2, 2, 4, 1]),
    lineWidth: rng.pick([80, 0, 20]),
    collectionStyle: rng.pick(['any', 'any', 'flow', 'block'] as const),
    aliasDuplicateObjects: rng.chance(0.5),
  };
  return YAML.stringify(data, options);
}

export type DataMutation = (rng: Rng, data: unknown) => string;

/** Mutations on the parsed data; each returns the text of the mutated document. */
export const DATA_MUTATIONS: Record<string, DataMutation> = {
  'delete-field': (rng, data) => {
    for (let i = rng.between(1, 3); i > 0; i--) {
      const all = slots(data);
      if (all.length) remove(rng.pick(all));
    }
    return writeYaml(rng, data);
  },
  'duplicate-entry': (rng, data) => {
    const lists = slots(data).filter((s) => Array.isArray(get(s)) && (get(s) as unknown[]).length);
    if (lists.length) {
      const list = get(rng.pick(lists)) as unknown[];
      const item = rng.pick(list);
      for (let i = rng.between(1, 3); i > 0; i--) list.splice(rng.int(list.length + 1), 0, rng.chance(0.5) ? structuredClone(item) : item);
    }
    return writeYaml(rng, data);
  },
  'wrong-type': (rng, data) => {
    const all = slots(data);
    for (let i = rng.between(1, 2); i > 0 && all.length; i--) set(rng.pick(all), hostileValue(rng));
    return writeYaml(rng, data);
  },
  'unknown-field': (rng, data) => {
    const maps = [data, ...slots(data).map(get)].filter((v): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v));
    if (maps.length) rng.pick(maps)[hostileKey(rng)] = hostileValue(rng);
    return writeYaml(rng, data);
  },
  'renamed-field': (rng, data) => {
    const fields = slots(data).filter((s) => !Array.isArray(s.parent));
    if (fields.length) {
      const slot = rng.pick(fields);
      const value = get(slot);
      remove(slot);
      (slot.parent as Record<string, unknown>)[typo(rng, String(slot.key))] = value;
    }
    return writeYaml(rng, data);
  },
  'swapped-values': (rng, data) => {
    const all = slots(data);
    if (all.length > 1) {
      const [a, b] = [rng.pick(all), rng.pick(all)];
      const [va, vb] = [get(a), get(b)];
      // Swapping a value into its own descendant would make a cycle; copies keep it a tree.
      set(a, structuredClone(vb));
      set(b, structuredClone(va));
    }
    return writeYaml(rng, data);
  },
  'root-replaced': (rng) => writeYaml(rng, hostileValue(rng)),
};

/** A `key: value` line: indentation (with a list dash), the key, the value when it is on the same line. */
const KEY_LINE = /^(\s*(?:- )?)([A-Za-z_][\w-]*):(?: +(.*))?$/;

interface KeyLine {
  index: number;
  prefix: string;
  key: string;
  value: string | undefined;
}

function keyLines(lines: readonly string[]): KeyLine[] {
  return lines.flatMap((line, index) => {
    const m = KEY_LINE.exec(line);
    return m ? [{ index, prefix: m[1]!, key: m[2]!, value: m[3] }] : [];
  });
}

/** Indentation of the key of `kl` (its list dash as a space). */
const keyIndent = (kl: KeyLine) => kl.prefix.replace('-', ' ');

function withScalarValue(lines: readonly string[]): KeyLine[] {
  return keyLines(lines).filter((kl) => kl.value !== undefined && kl.value !== '' && !kl.value.startsWith('#'));
}

function replaceValue(lines: string[], kl: KeyLine, value: string): void {
  lines[kl.index] = `${kl.prefix}${kl.key}: ${value}`;
}

/** Top-level keys that hold a billion-laughs alias bomb: `levels` anchors, each aliasing the previous one `width` times. */
export function aliasBomb(levels: number, width: number): string[] {
  const out = [`lol0: &lol0 [${Array(width).fill('"lol"').join(', ')}]`];
  for (let i = 1; i < levels; i++)
    out.push(
      `lol${i}: &lol${i} [${Array(width)
        .fill(`*lol${i - 1}`)
        .join(', ')}]`,
    );
  return out;
}

/** `depth` levels of flow collections around a scalar, all on one line. */
export function deepFlow(depth: number, asMap: boolean): string {
  return asMap ? `${'{a: '.repeat(depth)}1${'}'.repeat(depth)}` : `${'['.repeat(depth)}1${']'.repeat(depth)}`;
}

/** `depth` levels of block mappings, one more space of indentation per level, starting at `indent`. */
export function deepBlock(depth: number, indent: string): string[] {
  return Array.from({ length: depth }, (_, i) => `${indent}${' '.repeat(i + 1)}a:`).concat(`${indent}${' '.repeat(depth + 1)}1`);
}

/** `depth` nested block sequences on one line: `- - - … 1`. */
export function deepCompactSeq(depth: number): string {
  return `${'- '.repeat(depth)}1`;
}

export type YamlTextMutation = (rng: Rng, lines: string[]) => void;

/** Mutations of YAML text in place, each one construct a data round trip cannot write. */
export const YAML_TEXT_MUTATIONS: Record<string, YamlTextMutation> = {
  'duplicate-key': (rng, lines) => {
    const all = keyLines(lines);
    if (!all.length) return;
    const kl = rng.pick(all);
    lines.splice(kl.index + 1, 0, `${keyIndent(kl)}${kl.key}: ${kl.value ?? rng.pick(['x', '[]', '{}', ''])}`);
  },
  'anchor-and-alias': (rng, lines) => {
    // A value anchored and reused later (valid YAML), or an alias before its anchor or to no anchor at all.
    const all = withScalarValue(lines);
    if (all.length < 2) return;
    const [a, b] = [rng.pick(all), rng.pick(all)];
    const order = rng.int(3);
    if (order === 2) {
      replaceValue(lines, b, `*${rng.pick(['nope', 'a', ''])}`);
      return;
    }
    const [first, second] = (order === 0) === a.index < b.index ? [a, b] : [b, a];
    replaceValue(lines, first, `&a ${first.value}`);
    replaceValue(lines, second, '*a');
  },
  'self-alias': (rng, lines) => {
    // An alias inside the node its anchor names: the value would contain itself.
    const blocks = keyLines(lines).filter((kl) => kl.value === undefined);
    const scalars = withScalarValue(lines);
    if (blocks.length && rng.chance(0.5)) {
      const kl = rng.pick(blocks);
      const next = lines[kl.index + 1] ?? '';
      const indent = /^(\s*)/.exec(next)![1] || `${keyIndent(kl)}  `;
      lines[kl.index] = `${kl.prefix}${kl.key}: &self`;
      lines.splice(kl.index + 1, 0, next.trimStart().startsWith('- ') ? `${indent}- *self` : `${indent}self: *self`);
    } else if (scalars.length) {
      replaceValue(lines, rng.pick(scalars), rng.pick(['&s [*s]', '&s {x: *s}', '&s [1, [2, *s]]', '&s {name: *s, vpc: [*s]}']));
    }
  },
  'alias-bomb': (rng, lines) => {
    const bomb = aliasBomb(rng.between(4, 10), rng.between(4, 10));
    lines.splice(rng.chance(0.5) ? 0 : lines.length, 0, ...bomb);
    const scalars = withScalarValue(lines).filter((kl) => !kl.key.startsWith('lol'));
    if (scalars.length && rng.chance(0.5)) replaceValue(lines, rng.pick(scalars), `*lol${bomb.length - 1}`);
  },
  'deep-nesting': (rng, lines) => {
    const scalars = withScalarValue(lines);
    if (!scalars.length) return;
    const kl = rng.pick(scalars);
    const depth = rng.pick([5, 50, 200, 600, 1_200]);
    const shape = rng.int(3);
    if (shape === 0) replaceValue(lines, kl, deepFlow(depth, rng.chance(0.5)));
    else if (shape === 1) {
      lines[kl.index] = `${kl.prefix}${kl.key}:`;
      lines.splice(kl.index + 1, 0, `${keyIndent(kl)}  ${deepCompactSeq(depth * 8)}`);
    } else {
      lines[kl.index] = `${kl.prefix}${kl.key}:`;
      lines.splice(kl.index + 1, 0, ...deepBlock(Math.min(depth, 300), keyIndent(kl)));
    }
  },
  tags: (rng, lines) => {
    const scalars = withScalarValue(lines);
    if (!scalars.length) return;
    const kl = rng.pick(scalars);
    const tag = rng.pick([
      '!!str',
      '!!int',
      '!!float',
      '!!bool',
      '!!null',
      '!!binary',
      '!!set',
      '!!omap',
      '!!seq',
      '!!map',
      '!!timestamp',
      '!custom',
      '!<tag:yaml.org,2002:str>',
      '!!python/object',
      '!e!x',
    ]);
    replaceValue(lines, kl, `${tag} ${kl.value}`);
  },
  directives: (rng, lines) => {
    const directive = rng.pick(['%YAML 1.1', '%YAML 1.2', '%YAML 2.0', '%YAML 1.1\n%YAML 1.1', '%TAG !e! tag:example.com,2000:', '%FOO bar']);
    lines.unshift(...directive.split('\n'), '---');
    if (directive.startsWith('%YAML 1.1') && rng.chance(0.7)) {
      // Merge keys exist in YAML 1.1 only: merge an anchored mapping, a scalar (an error) or nothing known.
      const all = keyLines(lines).filter((kl) => kl.value === undefined);
      if (all.length) {
        const kl = rng.pick(all);
        lines.splice(kl.index + 1, 0, `${keyIndent(kl)}  <<: ${rng.pick(['*m', '{name: x}', '1', '[*m, 1]', '*nope'])}`);
        lines.splice(3, 0, `m: &m ${rng.pick(['{name: merged}', 'scalar', '[1, 2]'])}`);
      }
    }
  },
  'more-documents': (rng, lines) => {
    const r = rng.int(4);
    if (r === 0) lines.push('---', ...lines.slice(0, rng.int(lines.length)));
    else if (r === 1) lines.push('...', rng.pick(['', 'trailing: text', '---']));
    else if (r === 2) lines.unshift(rng.pick(['---', '--- |', '--- >', '--- !!map', '...']));
    else lines.splice(rng.int(lines.length + 1), 0, '---');
  },
};

export function applyYamlText(rng: Rng, kind: string, text: string): Mutant {
  const lines = text.split('\n');
  YAML_TEXT_MUTATIONS[kind]!(rng, lines);
  return { kind, input: lines.join('\n') };
}

/** The data of YAML text, to mutate as data; throws when there is none to walk (unreadable, or made cyclic by an alias). */
export function readData(text: string): unknown {
  const data: unknown = YAML.parse(text, { logLevel: 'error' });
  JSON.stringify(data); // throws on a cycle, which slots() would walk forever
  return data;
}

export function applyData(rng: Rng, kind: string, text: string): Mutant {
  return { kind, input: DATA_MUTATIONS[kind]!(rng, readData(text)) };
}
