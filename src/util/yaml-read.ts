import YAML, { isAlias, isMap, isNode, isScalar, isSeq, LineCounter, visit, type Document, type Node as YamlNode } from 'yaml';

/**
 * Why YAML text a person wrote cannot be read, and where (1-based; null when
 * the reader cannot tell). `syntax`: the text is not YAML; `unreadable`: it is,
 * but its value cannot be built (aliases that explode, refer to nothing or
 * contain themselves, merges of non-mappings, nesting deeper than the stack).
 */
export interface YamlProblem {
  kind: 'syntax' | 'unreadable';
  line: number | null;
  col: number | null;
  message: string;
}

export type YamlRead = { ok: true; doc: Document; counter: LineCounter; value: unknown } | { ok: false; problems: YamlProblem[] };

/** yaml's own default: expanding aliases past this many values is refused as an attack. */
const MAX_ALIAS_COUNT = 100;

/** A line of stray brackets is an error per character; past these the rest only repeats them. */
const MAX_SYNTAX_ERRORS = 20;

const TOO_DEEP = 'it nests too deeply (more levels than the reader can follow); look for runaway indentation or unclosed [ or {';
const SELF_ALIAS = (name: string) => `alias *${name} is inside the value anchored as &${name}, so that value would contain itself; write the value out`;
const NO_ANCHOR = (name: string) => `alias *${name} refers to no anchor &${name} before it; anchor the value first (an alias can only refer back)`;
const MERGE = 'a merge key << must merge a mapping, an alias of one, or a list of those; write the fields out instead';
const ALIAS_BOMB = 'its aliases expand to too many values (an "alias bomb"); write the values out instead of nesting aliases';

/** yaml's reader recurses per nesting level; past the stack it throws this, from any depth of its code. */
function isStackOverflow(err: unknown): boolean {
  return err instanceof RangeError && /call stack/i.test(err.message);
}

/**
 * The line where nesting goes deepest, judged from the text (indentation, list
 * dashes, open brackets), for a reader that overflowed: it cannot say where, or
 * names the collection that caught the overflow, which may be the outermost.
 */
function deepestLine(text: string): number {
  let open = 0;
  let best = { line: 1, depth: -1 };
  text.split(/\r\n|\r|\n/).forEach((line, index) => {
    const lead = /^[\s\-?]*/.exec(line)![0].length;
    let deepest = open;
    for (const ch of line) {
      if (ch === '[' || ch === '{') deepest = Math.max(deepest, ++open);
      else if ((ch === ']' || ch === '}') && open > 0) open--;
    }
    if (lead + deepest > best.depth) best = { line: index + 1, depth: lead + deepest };
  });
  return best.line;
}

/** yaml's message, first line only. */
function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}

function position(counter: LineCounter, node: { range?: [number, number, number] | null } | null | undefined): { line: number | null; col: number | null } {
  if (!node?.range) return { line: null, col: null };
  const { line, col } = counter.linePos(node.range[0]);
  return { line, col };
}

/**
 * The first alias that names no anchor before it (yaml cannot resolve it and
 * would say so without a line), or that sits inside the node its anchor names
 * (`&a [*a]`: its value would contain itself, which nothing downstream can
 * print or check). An alias names the last node with that anchor before it.
 */
function aliasProblem(doc: Document, counter: LineCounter): YamlProblem | null {
  const anchors = new Map<string, YamlNode>();
  let found: YamlProblem | null = null;
  visit(doc, (_key, node, path) => {
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      if (!target || path.includes(target)) {
        found = { kind: 'unreadable', ...position(counter, node), message: target ? SELF_ALIAS(node.source) : NO_ANCHOR(node.source) };
        return visit.BREAK;
      }
    } else if (isNode(node) && node.anchor) {
      anchors.set(node.anchor, node);
    }
    return undefined;
  });
  return found;
}

/** A YAML 1.1 merge (`<<: …`) of something other than mappings, which yaml refuses without a line. */
function badMerge(doc: Document, counter: LineCounter): YamlProblem | null {
  const resolved = (node: unknown) => (isAlias(node) ? node.resolve(doc) : node);
  let found: YamlProblem | null = null;
  visit(doc, {
    Pair(_key, pair) {
      const key = pair.key;
      const isMergeKey = isScalar(key) && (key.value === '<<' || (typeof key.value === 'symbol' && key.value.description === '<<'));
      if (!isMergeKey) return undefined;
      const value = resolved(pair.value);
      const sources = isSeq(value) ? value.items.map(resolved) : [value];
      if (sources.every((source) => isMap(source))) return undefined;
      found = { kind: 'unreadable', ...position(counter, key), message: MERGE };
      return visit.BREAK;
    },
  });
  return found;
}

function firstAlias(doc: Document, counter: LineCounter): { line: number | null; col: number | null } {
  let at = { line: null as number | null, col: null as number | null };
  visit(doc, {
    Alias(_key, node) {
      at = position(counter, node);
      return visit.BREAK;
    },
  });
  return at;
}

/**
 * Reads one YAML document (duplicate keys are errors) and builds its value.
 * Every way that can fail on hostile text — syntax errors, nesting deeper than
 * the stack, aliases that expand without bound ("billion laughs"), refer to
 * nothing or contain themselves — comes back as problems with their lines;
 * nothing is thrown.
 */
export function readYaml(text: string): YamlRead {
  const counter = new LineCounter();
  let doc: Document;
  try {
    // Not prettyErrors: it copies the source line into every error, quadratic on a long line of stray brackets.
    doc = YAML.parseDocument(text, { lineCounter: counter, prettyErrors: false, uniqueKeys: true });
  } catch (err) {
    if (!isStackOverflow(err)) throw err;
    return { ok: false, problems: [{ kind: 'unreadable', line: deepestLine(text), col: null, message: TOO_DEEP }] };
  }
  if (doc.errors.length) {
    // One overflow can be caught at several levels of the same nesting, as the stack allows: report it once.
    const firstOverflow = doc.errors.find((e) => e.code === 'RESOURCE_EXHAUSTION');
    const errors = doc.errors.filter((e) => e.code !== 'RESOURCE_EXHAUSTION' || e === firstOverflow);
    const problems: YamlProblem[] = errors.slice(0, MAX_SYNTAX_ERRORS).map((e) =>
      // yaml catches its own overflow while building collections, at whichever level had the stack left to report it.
      e.code === 'RESOURCE_EXHAUSTION'
        ? { kind: 'unreadable', line: deepestLine(text), col: null, message: TOO_DEEP }
        : { kind: 'syntax', ...counter.linePos(e.pos[0]), message: firstLine(e.message) },
    );
    const rest = errors.slice(MAX_SYNTAX_ERRORS);
    if (rest.length)
      problems.push({ kind: 'syntax', ...counter.linePos(rest[0]!.pos[0]), message: `${rest.length} more from here on, not listed; fix the ones above first` });
    return { ok: false, problems };
  }
  try {
    const alias = aliasProblem(doc, counter);
    if (alias) return { ok: false, problems: [alias] };
    return { ok: true, doc, counter, value: doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) };
  } catch (err) {
    if (isStackOverflow(err)) return { ok: false, problems: [{ kind: 'unreadable', line: deepestLine(text), col: null, message: TOO_DEEP }] };
    // yaml refuses aliases that expand past maxAliasCount with this ReferenceError.
    if (err instanceof ReferenceError && /excessive alias count/i.test(err.message)) {
      return { ok: false, problems: [{ kind: 'unreadable', ...firstAlias(doc, counter), message: ALIAS_BOMB }] };
    }
    const merge = badMerge(doc, counter);
    if (merge) return { ok: false, problems: [merge] };
    // Anything else yaml refuses while building the value is the document's fault too, if not locatable.
    return { ok: false, problems: [{ kind: 'unreadable', line: null, col: null, message: firstLine((err as Error).message) }] };
  }
}
