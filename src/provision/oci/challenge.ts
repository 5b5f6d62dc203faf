/** One challenge of a `WWW-Authenticate` header: `Bearer realm="…",service="…",scope="…"`. */
export interface Challenge {
  /** Lowercased: `bearer`, `basic`. */
  scheme: string;
  /** Parameter names lowercased, values unquoted. */
  params: Record<string, string>;
}

/**
 * Parses a `WWW-Authenticate` header (RFC 9110 §11.6.1) into its challenges. Values may be
 * quoted (with backslash escapes) or bare tokens; several challenges may share the header.
 */
export function parseWwwAuthenticate(header: string): Challenge[] {
  const challenges: Challenge[] = [];
  let i = 0;
  const skip = (chars: RegExp) => {
    while (i < header.length && chars.test(header[i] as string)) i++;
  };
  const token = (): string => {
    const start = i;
    while (i < header.length && /[!#$%&'*+.^_`|~\w-]/.test(header[i] as string)) i++;
    return header.slice(start, i);
  };
  while (i < header.length) {
    skip(/[\s,]/);
    const scheme = token();
    if (!scheme) break;
    const challenge: Challenge = { scheme: scheme.toLowerCase(), params: {} };
    challenges.push(challenge);
    for (;;) {
      skip(/[\s,]/);
      const save = i;
      const name = token();
      skip(/\s/);
      if (!name || header[i] !== '=') {
        // Not a parameter: the next challenge's scheme (or the end).
        i = save;
        break;
      }
      i++;
      skip(/\s/);
      let value = '';
      if (header[i] === '"') {
        for (i++; i < header.length && header[i] !== '"'; i++) value += header[i] === '\\' ? (header[++i] ?? '') : header[i];
        i++;
      } else {
        const start = i;
        while (i < header.length && !/[\s,]/.test(header[i] as string)) i++;
        value = header.slice(start, i);
      }
      challenge.params[name.toLowerCase()] = value;
    }
  }
  return challenges;
}
