import type { Document, LineCounter } from 'yaml';
import type { FieldPath } from './problems.js';

type Ranged = { range?: [number, number, number] | null };
type Pair = { key?: (Ranged & { value?: unknown }) | null };

/** Where fields of a parsed YAML document were written, as 1-based line numbers. */
export class SourcePositions {
  constructor(
    private readonly doc: Document,
    private readonly counter: LineCounter,
  ) {}

  private line(node: Ranged | null | undefined): number | null {
    return node?.range ? this.counter.linePos(node.range[0]).line : null;
  }

  private nodeAt(path: FieldPath): unknown {
    return path.length ? this.doc.getIn(path, true) : this.doc.contents;
  }

  /**
   * The line of a field: of its key in a mapping, of the item in a list. A field
   * that is missing points at its nearest parent that exists.
   */
  lineOf(path: FieldPath): number | null {
    for (let depth = path.length; depth > 0; depth--) {
      const last = path[depth - 1]!;
      const parent = path.slice(0, depth - 1);
      const line = typeof last === 'number' ? this.line(this.doc.getIn([...parent, last], true) as Ranged) : this.keyLine(parent, last);
      if (line !== null) return line;
    }
    return this.line(this.doc.contents as Ranged | null);
  }

  /** The line of `key` inside the mapping at `parent`; null when it is not there. */
  private keyLine(parent: FieldPath, key: string): number | null {
    const container = this.nodeAt(parent) as { items?: Pair[] } | null | undefined;
    if (!container || !Array.isArray(container.items)) return null;
    const pair = container.items.find((item) => item && item.key && 'value' in item.key && String(item.key.value) === key);
    return this.line(pair?.key);
  }
}
