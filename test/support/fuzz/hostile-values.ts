import type { Rng } from './rng.js';

// Values a hand-written YAML field should not hold but might: every YAML type,
// strings that only look right, huge, unicode and control-character strings,
// deep and long collections. Sizes are bounded so each input parses in well
// under 50 ms.

/** Characters that drive terminals or confuse parsers; each must come out escaped or refused, never raw. */
export const CONTROL_CHARS = [
  '\u0000',
  '\u0001',
  '\u0007',
  '\b',
  '\u000b',
  '\f',
  '\u001b',
  '\u001b[2J',
  '\u007f',
  '\u0085',
  '\u009b',
  '\u2028',
  '\u2029',
  '\u202e',
  '\ufeff',
  '\ufffe',
  '\uffff',
  '\ud800',
];

const UNICODE = ['ｈｕｂ', 'clüster1', 'ı', 'İ', '\u0301', 'e\u0301', '🚀', '👩‍👩‍👧', 'مرحبا', 'クラスタ', '\u200b', '\u00a0', 'Ω', 'ß'];

const LOOKALIKES = [
  '',
  ' ',
  'yes',
  'no',
  'on',
  'off',
  'null',
  '~',
  'true',
  'True',
  '0',
  '-1',
  '0x1F',
  '1e3',
  '.inf',
  '.nan',
  'Hub',
  'hub ',
  ' hub',
  'vpc_1',
  'vpc-',
  '-vpc',
  'a'.repeat(64),
  'a'.repeat(21),
  'default',
  'kube-system',
  'open-cluster-management-x',
  'constructor',
  '__proto__',
  'toString',
  'hasOwnProperty',
  'v1.37.2 ',
  'V1.37.2',
  'ocm-lab/v1',
  'Lab ',
  '10.213.0.0/8',
  '10.213.1.0/16',
  '8.8.8.0/24',
  '999.1.1.1/16',
  '::1/64',
  '${HOME}',
  '$(reboot)',
  '*alias',
  '&anchor',
  '!tag',
  '%directive',
  '# comment',
  '- item',
  'key: value',
  '[a, b]',
  '{a: b}',
  '"quoted"',
  "'single'",
  '|',
  '>',
  '---',
  '...',
];

function hugeString(rng: Rng): string {
  const unit = rng.pick(['a', 'ab-', ' ', '🚀', '\u0000', 'é', '-', '#', '\\', '"', "'"]);
  return unit.repeat(Math.ceil(rng.between(1_000, 10_000) / unit.length));
}

function controlString(rng: Rng): string {
  const n = rng.between(1, 4);
  let s = rng.pick(['hub', 'cluster1', 'vpc-1', '']);
  for (let i = 0; i < n; i++) {
    const at = rng.int(s.length + 1);
    s = s.slice(0, at) + rng.pick(CONTROL_CHARS) + s.slice(at);
  }
  return s;
}

export function unicodeString(rng: Rng): string {
  return Array.from({ length: rng.between(1, 4) }, () => rng.pick(UNICODE)).join(rng.pick(['', '-', ' ']));
}

export function hostileString(rng: Rng): string {
  const r = rng.int(10);
  if (r < 5) return rng.pick(LOOKALIKES);
  if (r < 7) return unicodeString(rng);
  if (r < 9) return controlString(rng);
  return hugeString(rng);
}

/** A mapping key that is not a field of anything. */
export function hostileKey(rng: Rng): string {
  const r = rng.int(6);
  if (r === 0) return controlString(rng);
  if (r === 1) return unicodeString(rng);
  if (r === 2) return 'k'.repeat(rng.between(100, 2_000));
  return rng.pick([
    'Name',
    'vpcc',
    'cluster',
    'hubb',
    'HUB',
    'apiversion',
    'Kind',
    'addon',
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    '<<',
    '?',
    '-',
    '',
    ' ',
    '0',
    'null',
    'true',
  ]);
}

/** A list nested `depth` levels deep around one value. */
function nested(depth: number, leaf: unknown, asMap: boolean): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = asMap ? { a: v } : [v];
  return v;
}

/** A value of any YAML type, wrong for most fields. */
export function hostileValue(rng: Rng, depth = 0): unknown {
  const r = rng.int(depth > 1 ? 6 : 11);
  switch (r) {
    case 0:
      return rng.pick([0, -1, 1, 1.5, 65536, 2 ** 53 + 1, -0, 1e308, Number.MAX_SAFE_INTEGER, Infinity, -Infinity, Number.NaN]);
    case 1:
    case 2:
      return hostileString(rng);
    case 3:
      return rng.chance(0.5);
    case 4:
      return null;
    case 5:
      return rng.pick([[], {}, '', [null], [{}], { '': null }]);
    case 6:
      return Array.from({ length: rng.between(1, 5) }, () => hostileValue(rng, depth + 1));
    case 7:
      return Object.fromEntries(Array.from({ length: rng.between(1, 4) }, () => [hostileKey(rng), hostileValue(rng, depth + 1)]));
    case 8:
      return nested(rng.between(2, 150), hostileValue(rng, depth + 2), rng.chance(0.5));
    case 9:
      return Array.from({ length: rng.pick([100, 1_000, 3_000]) }, (_, i) => rng.pick([i, `x${i}`, { name: `c${i}` }]));
    default:
      return { name: hostileString(rng), vpc: hostileString(rng), hub: rng.chance(0.5) };
  }
}
