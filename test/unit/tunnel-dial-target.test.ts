import { describe, expect, it } from 'vitest';
import { checkDialTarget, DialTargetError } from '../../src/tunnel/dial-target.js';

describe('what the proxy-agent agrees to dial', () => {
  it('takes tcp to host:port, [v6]:port and names', () => {
    expect(checkDialTarget('tcp', 'cluster1:443')).toEqual({ host: 'cluster1', port: 443 });
    expect(checkDialTarget('tcp', 'kubernetes.default.svc:6443')).toEqual({ host: 'kubernetes.default.svc', port: 6443 });
    expect(checkDialTarget('tcp', '10.0.0.2:1')).toEqual({ host: '10.0.0.2', port: 1 });
    expect(checkDialTarget('tcp', '[fd00::1]:65535')).toEqual({ host: 'fd00::1', port: 65535 });
    expect(checkDialTarget('tcp', '[fe80::1%eth0]:80')).toEqual({ host: 'fe80::1%eth0', port: 80 });
  });

  it('refuses other protocols, saying which', () => {
    for (const p of ['udp', 'unix', '', 'TCP', 'tcp4'])
      expect(() => checkDialTarget(p, 'a:1')).toThrow(`protocol ${JSON.stringify(p)} is not supported; only tcp`);
  });

  it('refuses ports out of range instead of letting net.connect throw', () => {
    for (const port of ['0', '65536', '99999', '99999999999999999999', '000000']) {
      expect(() => checkDialTarget('tcp', `127.0.0.1:${port}`)).toThrow(/is out of range 1-65535/);
    }
  });

  it('refuses malformed addresses and hosts a resolver should never see', () => {
    const bad = [
      '127.0.0.1',
      '127.0.0.1:',
      ':443',
      '127.0.0.1:https',
      '127.0.0.1:-1',
      '[::1:443',
      '[]:443',
      'a:b:443',
      'cluster1 :443',
      'clu ster1:443',
      'cluster1\n:443',
      'user@cluster1:443',
      'cluster1/x:443',
      '[::1]]:443',
      '[not-v6]:443',
      '',
    ];
    for (const a of bad) expect(() => checkDialTarget('tcp', a), JSON.stringify(a)).toThrow(DialTargetError);
  });
});
