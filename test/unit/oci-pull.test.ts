import { describe, expect, it } from 'vitest';
import { DigestMismatchError, ExitCode, InvalidInputError, RegistryUnavailableError, exitCodeOf } from '../../src/errors.js';
import { parseWwwAuthenticate } from '../../src/provision/oci/challenge.js';
import { lookUp, memberPath } from '../../src/provision/oci/layer.js';
import { parseManifest } from '../../src/provision/oci/manifest.js';
import { choosePlatform, hostPlatform } from '../../src/provision/oci/platform.js';
import { defaultRegistryBase, formatReference, parseReference } from '../../src/provision/oci/reference.js';
import { ocmImage } from '../../src/provision/recipes.js';

const D = `sha256:${'ab'.repeat(32)}`;

describe('image references', () => {
  it('splits registry, repository, tag and digest', () => {
    expect(parseReference('quay.io/open-cluster-management/registration:v1.2.1')).toEqual({
      host: 'quay.io',
      repository: 'open-cluster-management/registration',
      tag: 'v1.2.1',
      digest: undefined,
    });
    expect(parseReference(`quay.io/ns/name@${D}`)).toEqual({ host: 'quay.io', repository: 'ns/name', tag: undefined, digest: D });
    expect(parseReference(`localhost:5000/a/b:t@${D}`)).toEqual({ host: 'localhost:5000', repository: 'a/b', tag: 't', digest: D });
    expect(parseReference('127.0.0.1:5000/x')).toMatchObject({ host: '127.0.0.1:5000', repository: 'x', tag: 'latest' });
  });

  it('reads Docker Hub short names as docker.io/library/… and sends them to registry-1.docker.io', () => {
    expect(formatReference(parseReference('busybox'))).toBe('docker.io/library/busybox:latest');
    expect(formatReference(parseReference('kindest/node:v1.35.0'))).toBe('docker.io/kindest/node:v1.35.0');
    expect(formatReference(parseReference(`node@${D}`))).toBe(`docker.io/library/node@${D}`);
    expect(defaultRegistryBase('docker.io')).toBe('https://registry-1.docker.io');
    expect(defaultRegistryBase('quay.io')).toBe('https://quay.io');
  });

  it('rejects malformed references with exit 2, naming the part that is wrong', () => {
    const bad = (ref: string) => {
      try {
        parseReference(ref);
      } catch (err) {
        expect(err).toBeInstanceOf(InvalidInputError);
        expect(exitCodeOf(err)).toBe(ExitCode.invalidInput);
        return (err as Error).message;
      }
      throw new Error(`${ref} was accepted`);
    };
    expect(bad('quay.io/ns/Name:v1')).toContain('"Name"');
    expect(bad('quay.io/ns/name@sha256:abc')).toContain('digest "sha256:abc"');
    expect(bad('quay.io/ns/name:-bad')).toContain('tag "-bad"');
    expect(bad('quay.io/')).toContain('no repository name');
  });

  it('names OCM images as upstream publishes them (the addon manager is addon-manager)', () => {
    expect(ocmImage('registration', 'v1.2.1')).toBe('quay.io/open-cluster-management/registration:v1.2.1');
    expect(ocmImage('addon', 'v1.2.1')).toBe('quay.io/open-cluster-management/addon-manager:v1.2.1');
  });
});

describe('WWW-Authenticate', () => {
  it('reads a registry Bearer challenge', () => {
    const header = 'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/busybox:pull"';
    expect(parseWwwAuthenticate(header)).toEqual([
      { scheme: 'bearer', params: { realm: 'https://auth.docker.io/token', service: 'registry.docker.io', scope: 'repository:library/busybox:pull' } },
    ]);
  });

  it('reads several challenges, bare tokens, escapes and spaces around =', () => {
    const header = 'Basic realm="a \\"quoted\\" realm", Bearer realm = "https://quay.io/v2/auth" , service=quay.io,error="invalid_token"';
    expect(parseWwwAuthenticate(header)).toEqual([
      { scheme: 'basic', params: { realm: 'a "quoted" realm' } },
      { scheme: 'bearer', params: { realm: 'https://quay.io/v2/auth', service: 'quay.io', error: 'invalid_token' } },
    ]);
    expect(parseWwwAuthenticate('')).toEqual([]);
  });
});

describe('platform choice', () => {
  const entry = (architecture: string, variant?: string, os = 'linux') => ({
    digest: `${os}/${architecture}/${variant ?? ''}`,
    platform: { os, architecture, variant },
  });

  it('maps Node arches to Go arches, arm64 as v8', () => {
    expect(hostPlatform('x64')).toEqual({ os: 'linux', architecture: 'amd64' });
    expect(hostPlatform('arm64')).toEqual({ os: 'linux', architecture: 'arm64', variant: 'v8' });
  });

  it('picks this platform, accepts arm64 without a variant, and skips attestations and other OSes', () => {
    const index = [
      entry('unknown', undefined, 'unknown'),
      entry('amd64', undefined, 'windows'),
      entry('arm', 'v7'),
      entry('arm64'),
      entry('amd64'),
      entry('arm64', 'v8'),
    ];
    expect(choosePlatform(index, hostPlatform('x64'))?.digest).toBe('linux/amd64/');
    expect(choosePlatform(index, hostPlatform('arm64'))?.digest).toBe('linux/arm64/v8');
    expect(choosePlatform(index.slice(0, 4), hostPlatform('arm64'))?.digest).toBe('linux/arm64/');
    expect(choosePlatform([entry('arm64', 'v9')], hostPlatform('arm64'))).toBeUndefined();
    expect(choosePlatform([entry('s390x')], hostPlatform('x64'))).toBeUndefined();
  });
});

describe('manifests', () => {
  const json = (o: unknown) => Buffer.from(JSON.stringify(o));

  it('tells an index from an image manifest by media type, Content-Type or content', () => {
    const layer = { mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: D, size: 3 };
    expect(
      parseManifest(json({ schemaVersion: 2, mediaType: 'application/vnd.docker.distribution.manifest.list.v2+json', manifests: [layer] }), null, 'x').kind,
    ).toBe('index');
    expect(parseManifest(json({ schemaVersion: 2, layers: [layer] }), 'application/vnd.oci.image.manifest.v1+json', 'x')).toEqual({
      kind: 'image',
      layers: [layer],
    });
    expect(parseManifest(json({ schemaVersion: 2, manifests: [] }), null, 'x').kind).toBe('index');
  });

  it('says what is wrong with one it cannot read', () => {
    expect(() => parseManifest(Buffer.from('<html>'), null, 'quay.io/a:b')).toThrow('quay.io/a:b: the manifest is not JSON');
    expect(() => parseManifest(json({ schemaVersion: 1, fsLayers: [] }), null, 'r')).toThrow('manifest schema version 1');
    expect(() => parseManifest(json({ schemaVersion: 2, layers: [{ digest: D }] }), null, 'r')).toThrow('layers[0] has no digest and size');
  });
});

describe('layers and whiteouts', () => {
  it('finds a file however the layer spells member names', () => {
    expect(memberPath('/usr/bin/../bin/x')).toBe('usr/bin/x');
    expect(lookUp(['./', './registration'], 'registration')).toEqual({ state: 'present', member: './registration' });
    expect(lookUp(['usr/', 'usr/bin/', 'usr/bin/x'], 'usr/bin/x')).toEqual({ state: 'present', member: 'usr/bin/x' });
    expect(lookUp(['other'], 'usr/bin/x')).toEqual({ state: 'absent' });
  });

  it('honours a whiteout of the file or an ancestor, and an opaque ancestor directory', () => {
    expect(lookUp(['usr/bin/.wh.x'], 'usr/bin/x')).toEqual({ state: 'deleted' });
    expect(lookUp(['./usr/.wh.bin'], 'usr/bin/x')).toEqual({ state: 'deleted' });
    expect(lookUp(['usr/bin/.wh..wh..opq', 'usr/bin/y'], 'usr/bin/x')).toEqual({ state: 'deleted' });
    // The layer that makes a directory opaque may still hold the file itself.
    expect(lookUp(['usr/bin/.wh..wh..opq', 'usr/bin/x'], 'usr/bin/x')).toMatchObject({ state: 'present' });
    expect(lookUp(['.wh..wh..opq'], 'x')).toEqual({ state: 'absent' });
    expect(lookUp(['usr/bin/.wh.xy'], 'usr/bin/x')).toEqual({ state: 'absent' });
  });
});

describe('artifact errors', () => {
  it('a digest mismatch has an exit code of its own and names the artifact and both digests', () => {
    const err = new DigestMismatchError('quay.io/ns/a:v1', D, `sha256:${'cd'.repeat(32)}`);
    expect(exitCodeOf(err)).toBe(ExitCode.integrity);
    expect(err.message).toBe(`quay.io/ns/a:v1: digest mismatch: expected ${D}, got sha256:${'cd'.repeat(32)}; nothing was cached`);
    expect(err.hint).toContain('--artifacts build');
  });

  it('an unavailable registry names the host, why, and both ways out', () => {
    const err = new RegistryUnavailableError('quay.io', 'HTTP 500 for https://quay.io/v2/ns/a/manifests/v1', false);
    expect(err.message).toBe('registry quay.io did not serve the image: HTTP 500 for https://quay.io/v2/ns/a/manifests/v1');
    expect(err.hint).toContain('--artifacts build');
    expect(err.hint).toContain('mirrors file');
    expect(exitCodeOf(err)).toBe(ExitCode.missingPrerequisite);
  });
});
