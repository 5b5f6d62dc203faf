import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContainerStartError } from '../../src/nodelet/errors.js';
import { materialiseVolumes } from '../../src/nodelet/pod-files.js';
import { renderVolume, volumeBinds, type VolumeSources } from '../../src/nodelet/volumes.js';
import type { ConfigMap, NodeFacts, Pod, Secret, Volume } from '../../src/nodelet/types.js';
import { useTempDir } from '../support/temp-dir.js';

const node: NodeFacts = { nodeName: 'n', address: '10.0.0.5', cpuCores: 2, memoryBytes: 2 ** 30 };
const b64 = (s: string) => Buffer.from(s).toString('base64');

function sources(): VolumeSources & { tokenCalls: string[] } {
  const tokenCalls: string[] = [];
  return {
    tokenCalls,
    node,
    objects: {
      secret: async (_ns, name) => (name === 'creds' ? ({ metadata: { name }, data: { user: b64('admin'), pass: b64('s3cret') } } as Secret) : null),
      configMap: async (_ns, name) => (name === 'kube-root-ca.crt' ? ({ metadata: { name }, data: { 'ca.crt': 'CA PEM' } } as ConfigMap) : null),
    },
    token: async (aud, exp) => {
      tokenCalls.push(`${aud ?? ''}|${exp}`);
      return `token-for-${aud ?? 'apiserver'}`;
    },
  };
}

/** The volume the ServiceAccount admission plugin adds to every pod. */
const kubeApiAccess: Volume = {
  name: 'kube-api-access-abcde',
  projected: {
    sources: [
      { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
  },
};

function pod(volumes: Volume[], mounts: { name: string; mountPath: string; subPath?: string }[]): Pod {
  return {
    metadata: { name: 'p', namespace: 'team', uid: 'u' },
    spec: { containers: [{ name: 'main', image: 'ocm-lab:dev', volumeMounts: mounts }], volumes },
  };
}

describe('volume rendering', () => {
  it('renders the kube-api-access projected volume: token, ca.crt, namespace', async () => {
    const s = sources();
    const v = await renderVolume(pod([kubeApiAccess], []), kubeApiAccess, s);
    expect(v.kind).toBe('files');
    const files = v.kind === 'files' ? v.files : [];
    expect(files.map((f) => [f.path, f.data.toString(), f.mode.toString(8)])).toEqual([
      ['token', 'token-for-apiserver', '600'],
      ['ca.crt', 'CA PEM', '644'],
      ['namespace', 'team', '644'],
    ]);
    expect(s.tokenCalls).toEqual(['|3607']);
  });

  it('renders secret items under their paths; a missing key or secret is an error unless optional', async () => {
    const s = sources();
    const withItems: Volume = { name: 'c', secret: { secretName: 'creds', items: [{ key: 'pass', path: 'sub/password' }] } };
    const r = await renderVolume(pod([withItems], []), withItems, s);
    expect(r.kind === 'files' && r.files.map((f) => [f.path, f.data.toString()])).toEqual([['sub/password', 's3cret']]);

    const missing: Volume = { name: 'm', secret: { secretName: 'nope' } };
    await expect(renderVolume(pod([missing], []), missing, s)).rejects.toThrow('volume m: secret "nope" not found');
    const optional: Volume = { name: 'o', secret: { secretName: 'nope', optional: true } };
    expect(await renderVolume(pod([optional], []), optional, s)).toEqual({ kind: 'files', files: [] });
  });

  it('refuses item paths that leave the volume', async () => {
    const bad: Volume = { name: 'c', secret: { secretName: 'creds', items: [{ key: 'pass', path: '../escape' }] } };
    await expect(renderVolume(pod([bad], []), bad, sources())).rejects.toThrow("path '../escape' must be relative");
  });

  it('names the supported types when a volume type is not supported', async () => {
    const hostPath: Volume = { name: 'h', hostPath: { path: '/etc' } };
    const err = await renderVolume(pod([hostPath], []), hostPath, sources()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContainerStartError);
    expect((err as ContainerStartError).retryable).toBe(false);
    expect((err as Error).message).toBe(
      'volume h: type hostPath is not supported by the nodelet (supported: secret, configMap, projected, downwardAPI, emptyDir)',
    );
  });
});

describe('mount paths', () => {
  it('binds each volumeMount to its volume directory, or the subPath in it, parents first', () => {
    const p = pod(
      [kubeApiAccess, { name: 'cfg', configMap: { name: 'x' } }],
      [
        { name: 'kube-api-access-abcde', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
        { name: 'cfg', mountPath: '/etc/app/config.yaml', subPath: 'config.yaml' },
        { name: 'cfg', mountPath: '/srv//' },
      ],
    );
    p.spec.containers[0]!.volumeMounts![0]!.readOnly = true;
    expect(volumeBinds('/pods/team_p_u', p, p.spec.containers[0]!)).toEqual([
      { source: '/pods/team_p_u/volumes/cfg', destination: '/srv', readOnly: false, volume: 'cfg' },
      { source: '/pods/team_p_u/volumes/cfg/config.yaml', destination: '/etc/app/config.yaml', readOnly: false, volume: 'cfg', subPath: 'config.yaml' },
      {
        source: '/pods/team_p_u/volumes/kube-api-access-abcde',
        destination: '/var/run/secrets/kubernetes.io/serviceaccount',
        readOnly: true,
        volume: 'kube-api-access-abcde',
      },
    ]);
  });

  it('allows nested mounts (each container has its own mount namespace)', () => {
    const v = [
      { name: 'a', emptyDir: {} },
      { name: 'b', emptyDir: {} },
    ];
    const nested = pod(v, [
      { name: 'b', mountPath: '/data/inner' },
      { name: 'a', mountPath: '/data' },
    ]);
    expect(volumeBinds('/d', nested, nested.spec.containers[0]!).map((b) => b.destination)).toEqual(['/data', '/data/inner']);
  });

  it('rejects mounts of unknown volumes, relative paths, a path used twice and subPaths that leave the volume', () => {
    const v = [
      { name: 'a', emptyDir: {} },
      { name: 'b', emptyDir: {} },
    ];
    const binds = (mounts: { name: string; mountPath: string; subPath?: string }[]) => () =>
      volumeBinds('/d', pod(v, mounts), pod(v, mounts).spec.containers[0]!);
    expect(binds([{ name: 'zzz', mountPath: '/x' }])).toThrow('volumeMount zzz names no volume');
    expect(binds([{ name: 'a', mountPath: 'x' }])).toThrow("mountPath 'x' must be an absolute path");
    expect(binds([{ name: 'a', mountPath: '/' }])).toThrow("mountPath '/' must be an absolute path below /");
    expect(
      binds([
        { name: 'a', mountPath: '/data' },
        { name: 'b', mountPath: '/data/' },
      ]),
    ).toThrow('mountPath /data is used twice');
    expect(binds([{ name: 'a', mountPath: '/data', subPath: '../up' }])).toThrow("path '../up' must be relative");
  });
});

describe('materialised pod directory', () => {
  const tmp = useTempDir('nodelet-vol-', { each: true });

  it('writes every volume under volumes/<name>: credentials 0600, emptyDir writable by any user', async () => {
    const p = pod(
      [kubeApiAccess, { name: 'creds', secret: { secretName: 'creds' } }, { name: 'scratch', emptyDir: {} }, { name: 'work', emptyDir: {} }],
      [
        { name: 'kube-api-access-abcde', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
        { name: 'creds', mountPath: '/etc/creds' },
        { name: 'scratch', mountPath: '/tmp/scratch' },
        { name: 'work', mountPath: '/work/cache', subPath: 'cache/one' },
      ],
    );
    await materialiseVolumes(tmp.path, p, sources());
    const read = (v: string, f: string) => fs.readFile(path.join(tmp.path, 'volumes', v, f), 'utf8');
    expect(await read('kube-api-access-abcde', 'token')).toBe('token-for-apiserver');
    expect(await read('kube-api-access-abcde', 'namespace')).toBe('team');
    expect(await read('creds', 'pass')).toBe('s3cret');
    expect((await fs.stat(path.join(tmp.path, 'volumes', 'creds', 'pass'))).mode & 0o777).toBe(0o600);
    expect((await fs.stat(path.join(tmp.path, 'volumes', 'scratch'))).mode & 0o777).toBe(0o777);
    expect((await fs.stat(path.join(tmp.path, 'volumes', 'work', 'cache', 'one'))).isDirectory()).toBe(true);
    expect((await fs.stat(tmp.path)).mode & 0o777).toBe(0o700);
  });

  it('gives credentials to the one user all containers run as, or makes them readable when users differ', async () => {
    const p = pod([{ name: 'creds', secret: { secretName: 'creds' } }], [{ name: 'creds', mountPath: '/etc/creds' }]);
    await materialiseVolumes(tmp.path, p, sources(), { uid: 10001, gid: 0 });
    const st = await fs.stat(path.join(tmp.path, 'volumes', 'creds', 'pass'));
    expect([st.uid, st.mode & 0o777]).toEqual([10001, 0o600]);
    await materialiseVolumes(tmp.path, p, sources(), 'shared');
    expect((await fs.stat(path.join(tmp.path, 'volumes', 'creds', 'pass'))).mode & 0o777).toBe(0o644);
  });

  it('removes files that vanished from their source on the next pass', async () => {
    const p = pod([{ name: 'creds', secret: { secretName: 'creds' } }], [{ name: 'creds', mountPath: '/etc/creds' }]);
    await materialiseVolumes(tmp.path, p, sources());
    const fewer = sources();
    fewer.objects.secret = async (_ns, name) => ({ metadata: { name }, data: { user: b64('admin') } }) as Secret;
    await materialiseVolumes(tmp.path, p, fewer);
    expect((await fs.readdir(path.join(tmp.path, 'volumes', 'creds'))).sort()).toEqual(['user']);
  });
});
