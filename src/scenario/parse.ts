import path from 'node:path';
import YAML from 'yaml';
import { z } from 'zod';
import { InvalidInputError } from '../errors.js';
import { EXPECTATION_KINDS, type ExpectationKind, type Scenario, type Step } from './types.js';

const frontMatterSchema = z.strictObject({
  title: z.string().min(1),
  summary: z.string().min(1),
  requires: z
    .strictObject({
      clusters: z.array(z.string()).optional(),
      addons: z.array(z.string()).optional(),
      capabilities: z.array(z.string()).optional(),
    })
    .optional(),
});

const DEFAULT_TIMEOUT_SECONDS = 120;
const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/;

function fail(file: string, line: number, message: string): never {
  throw new InvalidInputError(`${file}:${line}: ${message}`, { hint: 'see docs/scenarios.md for the document format; nothing was run' });
}

function parseFrontMatter(lines: string[], file: string): { data: z.infer<typeof frontMatterSchema>; bodyStart: number } {
  if (lines[0]?.trim() !== '---') fail(file, 1, 'missing front matter: the document must start with a --- block holding title and summary');
  const end = lines.findIndex((l, i) => i > 0 && l.trim() === '---');
  if (end < 0) fail(file, 1, 'front matter is not closed with ---');
  let raw: unknown;
  try {
    raw = YAML.parse(lines.slice(1, end).join('\n'));
  } catch (err) {
    fail(file, 2, `front matter is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  const parsed = frontMatterSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join('.') || (issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : '(front matter)');
    const what = issue.code === 'unrecognized_keys' ? `unknown front matter field ${issue.keys.join(', ')}` : `front matter field '${field}': ${issue.message}`;
    fail(file, 2, what);
  }
  return { data: (parsed as { data: z.infer<typeof frontMatterSchema> }).data, bodyStart: end + 1 };
}

interface Fence {
  info: string;
  body: string;
  line: number;
}

function scanFences(lines: string[], start: number, file: string): Fence[] {
  const fences: Fence[] = [];
  for (let i = start; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] as string);
    if (!open) continue;
    const marker = open[2] as string;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = FENCE.exec(lines[j] as string);
      if (close && (close[2] as string).startsWith(marker[0] as string) && (close[2] as string).length >= marker.length && !(close[3] as string).trim()) break;
      body.push(lines[j] as string);
    }
    if (j >= lines.length) fail(file, i + 1, `code block opened here is never closed (expected a closing ${marker})`);
    fences.push({ info: (open[3] as string).trim(), body: body.join('\n'), line: i + 1 });
    i = j;
  }
  return fences;
}

const RUNNABLE: Record<string, Step['language']> = { sh: 'sh', bash: 'sh', shell: 'sh', console: 'sh', js: 'js', javascript: 'js' };

/** Parses a scenario document; malformed documents are rejected with file and line before anything runs. */
export function parseScenario(text: string, file: string): Scenario {
  const lines = text.split('\n');
  const { data, bodyStart } = parseFrontMatter(lines, file);
  const steps: Step[] = [];
  for (const fence of scanFences(lines, bodyStart, file)) {
    const [word = '', ...rest] = fence.info.split(/\s+/);
    if (word === 'expect') {
      const kind = rest[0] ?? '';
      if (!EXPECTATION_KINDS.includes(kind as ExpectationKind)) {
        fail(file, fence.line, `unknown expectation kind '${kind}'; use one of: ${EXPECTATION_KINDS.join(', ')}`);
      }
      const last = steps[steps.length - 1];
      if (!last || last.cleanup) fail(file, fence.line, 'an expect block must follow the command block it checks');
      if (kind !== 'fails' && !fence.body.trim()) fail(file, fence.line, `expect ${kind} needs the text to look for`);
      if (kind === 'matches') {
        try {
          new RegExp(fence.body.trim(), 'm');
        } catch (err) {
          fail(file, fence.line, `expect matches: invalid regular expression: ${(err as Error).message}`);
        }
      }
      last.expectations.push({ kind: kind as ExpectationKind, text: fence.body.trim(), line: fence.line });
      continue;
    }
    const language = RUNNABLE[word];
    if (!language || rest.includes('norun')) continue; // yaml, text, output…: shown to readers, not run
    let timeoutSeconds = DEFAULT_TIMEOUT_SECONDS;
    for (const attr of rest) {
      const t = /^timeout=(\d+)$/.exec(attr);
      if (t) timeoutSeconds = Number(t[1]);
      else if (attr !== 'cleanup') fail(file, fence.line, `unknown block attribute '${attr}'; known: timeout=<seconds>, cleanup, norun`);
    }
    steps.push({ language, code: fence.body, line: fence.line, timeoutSeconds, cleanup: rest.includes('cleanup'), expectations: [] });
  }
  if (!steps.some((s) => !s.cleanup)) fail(file, bodyStart + 1, 'the document has no command block to run');
  return {
    name: path.basename(file).replace(/\.md$/, ''),
    file,
    title: data.title,
    summary: data.summary,
    requires: { clusters: data.requires?.clusters ?? [], addons: data.requires?.addons ?? [], capabilities: data.requires?.capabilities ?? [] },
    steps,
    lines,
  };
}
