import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ExitCode, InvalidInputError, exitCodeOf } from '../../src/errors.js';
import {
  canonicalReference,
  familiarReference,
  parseReference,
  registryEndpoint,
  namesTag,
  registryPrefix,
  repositoryOf,
  type ImageReference,
} from '../../src/provision/oci/reference.js';

const D = `sha256:${'0123456789abcdef'.repeat(4)}`;

/**
 * Docker's reading of references (distribution/reference: normalize.go's splitDockerDomain and familiarizeName,
 * regexp.go's grammar; docs/notes.md#image-references): reference → parts, the full spelling and Docker's short one.
 */
const TABLE: { ref: string; parts: ImageReference; canonical: string; familiar: string }[] = [
  {
    ref: 'busybox',
    parts: { host: 'docker.io', repository: 'library/busybox', tag: 'latest', digest: undefined },
    canonical: 'docker.io/library/busybox:latest',
    familiar: 'busybox:latest',
  },
  {
    ref: 'docker.io/busybox:1.36',
    parts: { host: 'docker.io', repository: 'library/busybox', tag: '1.36', digest: undefined },
    canonical: 'docker.io/library/busybox:1.36',
    familiar: 'busybox:1.36',
  },
  {
    ref: 'index.docker.io/library/busybox:1.36',
    parts: { host: 'docker.io', repository: 'library/busybox', tag: '1.36', digest: undefined },
    canonical: 'docker.io/library/busybox:1.36',
    familiar: 'busybox:1.36',
  },
  {
    // The API's host, not a name of Docker Hub in references: Docker keeps it (registryEndpoint goes the other way).
    ref: 'registry-1.docker.io/library/busybox',
    parts: { host: 'registry-1.docker.io', repository: 'library/busybox', tag: 'latest', digest: undefined },
    canonical: 'registry-1.docker.io/library/busybox:latest',
    familiar: 'registry-1.docker.io/library/busybox:latest',
  },
  {
    ref: 'kindest/node:v1.35.0',
    parts: { host: 'docker.io', repository: 'kindest/node', tag: 'v1.35.0', digest: undefined },
    canonical: 'docker.io/kindest/node:v1.35.0',
    familiar: 'kindest/node:v1.35.0',
  },
  {
    // library/ with a nested path is not an official image's short name.
    ref: 'docker.io/library/a/b:1',
    parts: { host: 'docker.io', repository: 'library/a/b', tag: '1', digest: undefined },
    canonical: 'docker.io/library/a/b:1',
    familiar: 'library/a/b:1',
  },
  {
    ref: 'quay.io/open-cluster-management/registration:v1.2.1',
    parts: { host: 'quay.io', repository: 'open-cluster-management/registration', tag: 'v1.2.1', digest: undefined },
    canonical: 'quay.io/open-cluster-management/registration:v1.2.1',
    familiar: 'quay.io/open-cluster-management/registration:v1.2.1',
  },
  {
    ref: 'localhost/x',
    parts: { host: 'localhost', repository: 'x', tag: 'latest', digest: undefined },
    canonical: 'localhost/x:latest',
    familiar: 'localhost/x:latest',
  },
  {
    // A port makes the first component a registry; the tag is after the last `/`.
    ref: 'localhost:5000/x',
    parts: { host: 'localhost:5000', repository: 'x', tag: 'latest', digest: undefined },
    canonical: 'localhost:5000/x:latest',
    familiar: 'localhost:5000/x:latest',
  },
  {
    ref: `localhost:5000/a/b:t@${D}`,
    parts: { host: 'localhost:5000', repository: 'a/b', tag: 't', digest: D },
    canonical: `localhost:5000/a/b:t@${D}`,
    familiar: `localhost:5000/a/b:t@${D}`,
  },
  {
    ref: '127.0.0.1:5001/library/ocm-lab:dev',
    parts: { host: '127.0.0.1:5001', repository: 'library/ocm-lab', tag: 'dev', digest: undefined },
    canonical: '127.0.0.1:5001/library/ocm-lab:dev',
    familiar: '127.0.0.1:5001/library/ocm-lab:dev',
  },
  {
    ref: '[::1]:5000/x:1',
    parts: { host: '[::1]:5000', repository: 'x', tag: '1', digest: undefined },
    canonical: '[::1]:5000/x:1',
    familiar: '[::1]:5000/x:1',
  },
  {
    // Repository components are lower case, so a first component with upper case can only be a registry.
    ref: 'Registry.Example/team/x',
    parts: { host: 'Registry.Example', repository: 'team/x', tag: 'latest', digest: undefined },
    canonical: 'Registry.Example/team/x:latest',
    familiar: 'Registry.Example/team/x:latest',
  },
  {
    // A digest alone: no default tag (Docker pulls by the digest).
    ref: `quay.io/ns/name@${D}`,
    parts: { host: 'quay.io', repository: 'ns/name', tag: undefined, digest: D },
    canonical: `quay.io/ns/name@${D}`,
    familiar: `quay.io/ns/name@${D}`,
  },
  {
    // A tag and a digest: both kept (the digest is what a pull uses).
    ref: `node:24-bookworm-slim@${D}`,
    parts: { host: 'docker.io', repository: 'library/node', tag: '24-bookworm-slim', digest: D },
    canonical: `docker.io/library/node:24-bookworm-slim@${D}`,
    familiar: `node:24-bookworm-slim@${D}`,
  },
  {
    ref: ' ns/a__b.c-d--e:Tag_1.0-x ',
    parts: { host: 'docker.io', repository: 'ns/a__b.c-d--e', tag: 'Tag_1.0-x', digest: undefined },
    canonical: 'docker.io/ns/a__b.c-d--e:Tag_1.0-x',
    familiar: 'ns/a__b.c-d--e:Tag_1.0-x',
  },
];

describe('image references: one parser, Docker rules', () => {
  it.each(TABLE)('$ref', ({ ref, parts, canonical, familiar }) => {
    const parsed = parseReference(ref);
    expect(parsed).toEqual(parts);
    expect(canonicalReference(ref)).toBe(canonical);
    expect(familiarReference(parsed)).toBe(familiar);
    // Each spelling reads back as the same image.
    expect(parseReference(canonical)).toEqual(parts);
    expect(parseReference(familiar)).toEqual(parts);
  });

  const refused: [string, string][] = [
    ['quay.io/ns/Name:v1', 'repository component "Name"'],
    ['Busybox', 'repository component "Busybox"'],
    ['quay.io/ns/name@sha256:abc', 'digest "sha256:abc"'],
    [`x@md5:${'ab'.repeat(16)}`, 'is not sha256'],
    ['quay.io/ns/name:-bad', 'tag "-bad"'],
    ['x:', 'tag ""'],
    [`x:${'t'.repeat(129)}`, 'is not a valid tag'],
    ['quay.io/', 'no repository name'],
    ['', 'no repository name'],
    ['a//b', 'repository component ""'],
    ['a b', 'repository component "a b"'],
    ['https://quay.io/x', 'registry "https:"'],
    ['bad_host.io/x', 'registry "bad_host.io"'],
    ['0123456789abcdef'.repeat(4), 'image ID'],
    [`quay.io/${'a'.repeat(250)}`, 'longer than 255'],
  ];
  it.each(refused)('refuses %j with exit 2, naming what is wrong', (ref, why) => {
    let caught: unknown;
    try {
      parseReference(ref);
    } catch (err) {
      caught = err;
    }
    expect(caught, `${ref} was accepted`).toBeInstanceOf(InvalidInputError);
    expect(exitCodeOf(caught)).toBe(ExitCode.invalidInput);
    expect((caught as Error).message).toContain(JSON.stringify(ref));
    expect((caught as Error).message).toContain(why);
  });

  it("gives a registry's API host (Docker Hub's is registry-1.docker.io) and a repository without its version", () => {
    expect(registryEndpoint('docker.io')).toBe('registry-1.docker.io');
    expect(registryEndpoint('quay.io')).toBe('quay.io');
    expect(registryEndpoint('localhost:5001')).toBe('localhost:5001');
    expect(repositoryOf('quay.io/open-cluster-management/cluster-proxy:v0.9.0')).toBe(repositoryOf('quay.io/open-cluster-management/cluster-proxy'));
    expect(repositoryOf(`ocm-lab@${D}`)).toBe('docker.io/library/ocm-lab');
  });

  it('tells a tag the reference names from the default one', () => {
    expect(['x:latest', 'localhost:5000/x:1', `x:1@${D}`, 'quay.io/a/b:v1.2.1'].map(namesTag)).toEqual([true, true, true, true]);
    expect(['x', 'localhost:5000/x', `x@${D}`].map(namesTag)).toEqual([false, false, false]);
  });

  it('reads a registry to push under (host[:port][/path]), nothing else', () => {
    expect(['registry.lab:5000/team', 'ghcr.io/my-org/', 'localhost:5001', ' quay.io ', 'me'].map(registryPrefix)).toEqual([
      'registry.lab:5000/team',
      'ghcr.io/my-org',
      'localhost:5001',
      'quay.io',
      'me',
    ]);
    for (const bad of ['https://ghcr.io', 'ghcr.io/Org', 'reg:5000/ocm-lab:1', 'reg@sha256:ab', '', 'a b', '/']) expect(registryPrefix(bad), bad).toBeNull();
  });
});

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const PARSER = 'provision/oci/reference.ts';

/**
 * Files that may do string work on an image name without the parser, each with the reason. Keep it short: a new entry
 * needs a reason as good as these.
 */
const NOT_PARSING: Record<string, string> = {
  'addons/framework/image-registries.ts':
    "AddOnDeploymentConfig's registries rewrite the name as written (a prefix, or the last path segment), as upstream's addon-framework does; parity, not a parse",
};

/** What parsing a reference by hand looks like (outside comments). */
const BY_HAND: { what: string; pattern: RegExp }[] = [
  { what: "Docker Hub's names (docker.io, index.docker.io, registry-1.docker.io) in code", pattern: /['"`](?:index\.|registry-1\.)?docker\.io\b/ },
  { what: "Docker Hub's library/ namespace in code", pattern: /['"`/]library\// },
  {
    what: "an image name split at ':', '/' or '@'",
    pattern: /(?:image|Image|IMAGE|\bref|Ref\b|REF|reference)\w*(?:\.\w+)*\.(?:split|indexOf|lastIndexOf)\(\s*['"][:/@]['"]/,
  },
  { what: "a regular expression of the reference grammar's path components", pattern: /\[a-z0-9\]\+\((?:\?:)?(?:\(\?:)?\[\._/ },
  { what: "a regular expression of the reference grammar's tag", pattern: /\\w\]?\[\\w\.-\]\{0,127\}/ },
];

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map(async (e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [])),
  );
  return nested.flat();
}

/** The lines of a source file that are code: comment lines (`//`, `/*`, ` * `) are left out. */
function codeLines(text: string): string {
  return text
    .split('\n')
    .filter((line) => !/^\s*(?:\/\/|\/\*|\*)/.test(line))
    .join('\n');
}

describe('image references: one reader', () => {
  it(`only src/${PARSER} parses image references`, async () => {
    const files = await sourceFiles(SRC);
    const texts = await Promise.all(files.map(async (f) => ({ file: path.relative(SRC, f), text: codeLines(await fs.readFile(f, 'utf8')) })));
    expect(texts.length).toBeGreaterThan(100);
    const found: string[] = [];
    for (const { file, text } of texts) {
      if (file === PARSER || file in NOT_PARSING) continue;
      for (const { what, pattern } of BY_HAND) if (pattern.test(text)) found.push(`${file}: ${what}`);
    }
    expect(found, `parse references with src/${PARSER} (parseReference, canonicalReference, familiarReference, repositoryOf, registryEndpoint)`).toEqual([]);
  });

  it('recognises the hand parsing it is meant to catch', () => {
    const caught = (code: string) => BY_HAND.filter(({ pattern }) => pattern.test(codeLines(code))).map((b) => b.what);
    expect(caught("const host = first === '' ? 'docker.io' : first;")).toHaveLength(1);
    expect(caught('const spellings = [`library/${IMAGE}`];')).toHaveLength(1);
    expect(caught("const tag = OCM_LAB_IMAGE.slice(OCM_LAB_IMAGE.lastIndexOf(':') + 1);")).toHaveLength(1);
    expect(caught("const at = choice.ref.indexOf('@');")).toHaveLength(1);
    expect(caught("const [name] = imageRef.split(':');")).toHaveLength(1);
    expect(caught('const C = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;')).toHaveLength(1);
    expect(caught('const R = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(\\/[a-z0-9]+([._-][a-z0-9]+)*)*$/;')).toHaveLength(1);
    expect(caught('const REFERENCE = /^[a-z0-9][-a-z0-9._/:]*:[\\w][\\w.-]{0,127}$/i;')).toHaveLength(1);
    // Not references: a module@version key, a host:port, a comment.
    expect(caught("const v = key.slice(key.lastIndexOf('@') + 1);")).toEqual([]);
    expect(caught("const colon = local.lastIndexOf(':');")).toEqual([]);
    expect(caught(' * `busybox` is `docker.io/library/busybox`')).toEqual([]);
  });
});
