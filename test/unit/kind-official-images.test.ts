import fs from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { RegistryUnavailableError } from '../../src/errors.js';
import { pinnedReference } from '../../src/images/pinned-pull.js';
import { OFFICIAL_NODE_BASE } from '../../src/images/lab-images.js';
import { NO_MIRRORS, parseMirrors } from '../../src/provision/mirrors.js';
import { officialNodeImage } from '../../src/provision/versions.js';
import { DEFAULT_KUBERNETES_RELEASE } from '../../src/provision/versions.js';
import { chooseNodeImage, type NodeImageFacts } from '../../src/runtime/kind/images/official-node.js';
import { NODE_CGROUP_V1_LABEL, nodeFinalDockerfile } from '../../src/runtime/kind/images/node-files.js';

const built = DEFAULT_KUBERNETES_RELEASE.kubernetes;
const official = officialNodeImage(built)!;
const config = { kubernetesVersion: built };

function facts(cgroup: string, labels: Record<string, string> | Error = {}): NodeImageFacts & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    cgroupVersion: () => Promise.resolve(cgroup),
    labels: (image) => {
      asked.push(image.name);
      return labels instanceof Error ? Promise.reject(labels) : Promise.resolve(labels);
    },
  };
}

describe('the kind node image: published or built', () => {
  it('takes kind’s published image by digest on a cgroup v2 engine without reading its labels', async () => {
    const f = facts('2');
    const choice = await chooseNodeImage(config, 'auto', NO_MIRRORS, f);
    expect(choice).toMatchObject({ source: 'official', ref: `${official.tag}@${official.digest}` });
    expect(f.asked).toEqual([]);
  });

  it('on a cgroup v1 engine builds, saying why in one line, unless the image’s label says it runs there', async () => {
    const plain = await chooseNodeImage(config, 'auto', NO_MIRRORS, facts('1', { other: 'x' }));
    expect(plain.source).toBe('build');
    expect(plain.line).toMatch(/cgroup v1.*need cgroup v2/);
    expect(plain.line.split('\n')).toHaveLength(1);
    const labelled = await chooseNodeImage(config, 'official', NO_MIRRORS, facts('1', { [NODE_CGROUP_V1_LABEL]: 'true' }));
    expect(labelled.source).toBe('official');
  });

  it('a digests: entry of a mirrors file replaces the pin', async () => {
    const digest = `sha256:${'c'.repeat(64)}`;
    const mirrors = parseMirrors({ digests: { [official.tag]: digest } }, 'test');
    expect(await chooseNodeImage(config, 'auto', mirrors, facts('2'))).toMatchObject({ ref: `${official.tag}@${digest}` });
  });

  it('builds under build, and for a patch only the build gives; under auto a registry that does not answer is built around, under official it stops', async () => {
    expect((await chooseNodeImage(config, 'build', NO_MIRRORS, facts('2'))).source).toBe('build');
    if (official.kubernetes !== built) {
      const exact = await chooseNodeImage({ kubernetesVersion: built, kubernetesRequest: built }, 'auto', NO_MIRRORS, facts('2'));
      expect(exact.source).toBe('build');
      expect(exact.line).toContain(`Kubernetes ${built} is not what this lab's source gives`);
    }
    const down = new RegistryUnavailableError('registry-1.docker.io', 'ECONNREFUSED', true);
    const auto = await chooseNodeImage(config, 'auto', NO_MIRRORS, facts('1', down));
    expect(auto).toMatchObject({ source: 'build' });
    expect(auto.line).toContain('registry-1.docker.io');
    await expect(chooseNodeImage(config, 'official', NO_MIRRORS, facts('1', down))).rejects.toBe(down);
  });

  it('the built node image carries the label', () => {
    expect(nodeFinalDockerfile('img', 'k', 'key')).toContain(`${NODE_CGROUP_V1_LABEL}=true`);
  });
});

describe('our image’s official base', () => {
  it('the Dockerfile’s default base is the pinned OFFICIAL_NODE_BASE', async () => {
    const dockerfile = await fs.readFile(new URL('../../Dockerfile', import.meta.url), 'utf8');
    expect(dockerfile).toContain(`ARG BASE_IMAGE=${pinnedReference(OFFICIAL_NODE_BASE, NO_MIRRORS)}\n`);
  });
});
