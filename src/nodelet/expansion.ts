/**
 * Kubernetes' `$(VAR)` expansion in env values, command and args: a defined
 * variable is replaced, an undefined one is left as written, `$$` is a
 * literal `$` (so `$$(VAR)` stays `$(VAR)`).
 */
export function expandVars(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  let i = 0;
  while (i < input.length) {
    const ch = input[i] as string;
    if (ch !== '$' || i + 1 >= input.length) {
      out += ch;
      i++;
      continue;
    }
    const next = input[i + 1] as string;
    if (next === '$') {
      out += '$';
      i += 2;
    } else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close === -1) {
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, close);
      const value = lookup(name);
      out += value === undefined ? `$(${name})` : value;
      i = close + 1;
    } else {
      out += `$${next}`;
      i += 2;
    }
  }
  return out;
}
