/**
 * Problems that make `text` not well-formed XML, in a small reading of the rules a hand-written
 * SVG or HTML fragment can break: tags that do not nest or close, unquoted or repeated attributes,
 * `<` or a bare `&` in text, unknown entities. Empty when none (comments, CDATA and doctype aside).
 */
export function xmlProblems(text: string, options: { entities?: readonly string[] } = {}): string[] {
  const known = new Set(['amp', 'lt', 'gt', 'quot', 'apos', ...(options.entities ?? [])]);
  const problems: string[] = [];
  const stack: string[] = [];
  const checkText = (s: string, where: number) => {
    for (const m of s.matchAll(/&([^;\s]*);?/g)) {
      const name = m[1] ?? '';
      if (!m[0].endsWith(';') || !(known.has(name) || /^#(\d+|x[0-9a-fA-F]+)$/.test(name))) problems.push(`at ${where + (m.index ?? 0)}: bad entity '${m[0]}'`);
    }
  };
  const body = text.replace(/^<\?xml[^?]*\?>\s*/, '').replace(/<!doctype[^>]*>/i, '');
  let i = 0;
  let roots = 0;
  while (i < body.length) {
    const lt = body.indexOf('<', i);
    const chunk = body.slice(i, lt < 0 ? body.length : lt);
    if (chunk.includes('>')) problems.push(`at ${i}: '>' in text is allowed but suspicious`);
    checkText(chunk, i);
    if (lt < 0) break;
    if (body.startsWith('<!--', lt)) {
      const end = body.indexOf('-->', lt);
      if (end < 0) return [...problems, `at ${lt}: comment never closed`];
      i = end + 3;
      continue;
    }
    const gt = body.indexOf('>', lt);
    if (gt < 0) return [...problems, `at ${lt}: tag never closed`];
    const tag = body.slice(lt + 1, gt);
    i = gt + 1;
    if (tag.startsWith('/')) {
      const name = tag.slice(1).trim();
      const open = stack.pop();
      if (open !== name) problems.push(`at ${lt}: </${name}> closes <${open ?? 'nothing'}>`);
      continue;
    }
    const selfClosing = tag.endsWith('/');
    const m = /^([A-Za-z_][\w:.-]*)([\s\S]*?)\/?$/.exec(tag);
    if (!m) {
      problems.push(`at ${lt}: not a tag: <${tag.slice(0, 40)}>`);
      continue;
    }
    const attrs = m[2]!.trim();
    const names = new Set<string>();
    const attrRe = /([A-Za-z_][\w:.-]*)\s*=\s*("[^"<]*"|'[^'<]*')/y;
    let pos = 0;
    while (pos < attrs.length) {
      attrRe.lastIndex = pos;
      const a = attrRe.exec(attrs);
      if (!a) {
        problems.push(`at ${lt}: bad attribute in <${m[1]}>: ${attrs.slice(pos, pos + 40)}`);
        break;
      }
      if (names.has(a[1]!)) problems.push(`at ${lt}: attribute ${a[1]} twice in <${m[1]}>`);
      names.add(a[1]!);
      checkText(a[2]!, lt);
      pos = attrRe.lastIndex;
      while (/\s/.test(attrs[pos] ?? '')) pos++;
    }
    if (stack.length === 0) roots++;
    if (!selfClosing) stack.push(m[1]!);
  }
  if (stack.length) problems.push(`never closed: ${stack.join(' > ')}`);
  if (roots !== 1) problems.push(`${roots} root elements`);
  return problems;
}
