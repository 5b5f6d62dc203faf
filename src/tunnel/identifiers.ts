/**
 * Agent identifiers: what an agent says it can reach, sent as URL-query text
 * in the `agentIdentifiers` metadata, e.g. `host=cluster1&host=cluster1.ns&ipv4=10.0.0.2`.
 */
export interface AgentIdentifiers {
  host: string[];
  ipv4: string[];
  ipv6: string[];
  cidr: string[];
  defaultRoute: boolean;
}

function emptyIdentifiers(): AgentIdentifiers {
  return { host: [], ipv4: [], ipv6: [], cidr: [], defaultRoute: false };
}

export class IdentifierParseError extends Error {
  constructor(text: string, why: string) {
    super(`agent identifiers ${JSON.stringify(text)} are invalid: ${why}; expected URL-query form like host=cluster1&ipv4=10.0.0.2`);
    this.name = 'IdentifierParseError';
  }
}

/**
 * Parses the query form. Unknown keys are ignored (newer agents may send more);
 * `default-route` counts only its first value.
 */
export function parseAgentIdentifiers(text: string): AgentIdentifiers {
  const ids = emptyIdentifiers();
  let defaultRouteSeen = false;
  if (text.trim() === '') return ids;
  for (const part of text.split('&')) {
    if (part === '') continue;
    if (part.includes(';')) throw new IdentifierParseError(text, `';' is not a separator`);
    const eq = part.indexOf('=');
    const rawKey = eq < 0 ? part : part.slice(0, eq);
    const rawValue = eq < 0 ? '' : part.slice(eq + 1);
    let key: string;
    let value: string;
    try {
      key = decodeURIComponent(rawKey.replace(/\+/g, ' '));
      value = decodeURIComponent(rawValue.replace(/\+/g, ' '));
    } catch {
      throw new IdentifierParseError(text, `bad percent-encoding in ${JSON.stringify(part)}`);
    }
    switch (key) {
      case 'host':
        ids.host.push(value);
        break;
      case 'ipv4':
        ids.ipv4.push(value);
        break;
      case 'ipv6':
        ids.ipv6.push(value);
        break;
      case 'cidr':
        ids.cidr.push(value);
        break;
      case 'default-route':
        if (!defaultRouteSeen) {
          defaultRouteSeen = true;
          ids.defaultRoute = /^(1|t|true)$/i.test(value);
        }
        break;
      default:
        break;
    }
  }
  return ids;
}

export function formatAgentIdentifiers(ids: Partial<AgentIdentifiers>): string {
  const q = new URLSearchParams();
  for (const h of ids.host ?? []) q.append('host', h);
  for (const h of ids.ipv4 ?? []) q.append('ipv4', h);
  for (const h of ids.ipv6 ?? []) q.append('ipv6', h);
  for (const h of ids.cidr ?? []) q.append('cidr', h);
  if (ids.defaultRoute) q.append('default-route', 'true');
  return q.toString();
}
