import { describe, expect, it } from 'vitest';
import { secretNeedles } from '../support/secret-scan.js';

describe('secretNeedles: what a log scan looks for', () => {
  const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLXRoYXQtbWF0dGVycy1hbmQtaXMtbG9uZw';
  it('a JWT: its signature', () => expect(secretNeedles(jwt)).toEqual(['c2lnbmF0dXJlLXRoYXQtbWF0dGVycy1hbmQtaXMtbG9uZw']));
  it('a PEM private key: its body lines, not the armour', () => {
    const body = 'A'.repeat(64);
    expect(secretNeedles(`-----BEGIN EC PRIVATE KEY-----\n${body}\nBBBB\n-----END EC PRIVATE KEY-----\n`)).toEqual([body]);
  });
  it('a certificate or a name: nothing (public)', () => {
    expect(secretNeedles('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----')).toEqual([]);
    expect(secretNeedles('open-cluster-management-agent')).toEqual([]);
  });
  it('a kubeconfig: its token and client key', () => {
    const key = Buffer.from(`-----BEGIN PRIVATE KEY-----\n${'K'.repeat(64)}\n-----END PRIVATE KEY-----\n`).toString('base64');
    const needles = secretNeedles(`clusters: []\nusers:\n- name: a\n  user:\n    token: ${jwt}\n- name: b\n  user:\n    client-key-data: ${key}\n`);
    expect(needles).toEqual(['c2lnbmF0dXJlLXRoYXQtbWF0dGVycy1hbmQtaXMtbG9uZw', key.slice(0, 64), 'K'.repeat(64)]);
  });
  it('a random secret value', () => expect(secretNeedles('Zx8_u2Qm4PkT9wLr')).toEqual(['Zx8_u2Qm4PkT9wLr']));
});
