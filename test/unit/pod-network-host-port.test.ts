import { describe, expect, it } from 'vitest';
import { conflictingListener, parseListeners } from '../../src/nodelet/pod-network/index.js';

// `ss -H -l -n -t` as iproute2 6.1 prints it.
const SS = `LISTEN 0      4096     10.213.32.10:6443      0.0.0.0:*
LISTEN 0      511           0.0.0.0:8080      0.0.0.0:*
LISTEN 0      4096    127.0.0.53%lo:53        0.0.0.0:*
LISTEN 0      4096             [::]:9000         [::]:*
LISTEN 0      128                 *:7000            *:*
`;

describe('host ports of hostNetwork pods', () => {
  const listeners = parseListeners(SS);

  it('reads local addresses and ports of listening sockets', () => {
    expect(listeners).toEqual([
      { address: '10.213.32.10', port: 6443 },
      { address: '0.0.0.0', port: 8080 },
      { address: '127.0.0.53', port: 53 },
      { address: '::', port: 9000 },
      { address: '*', port: 7000 },
    ]);
  });

  it('finds a clash on the same address or through a wildcard on either side', () => {
    expect(conflictingListener(listeners, '10.213.32.10', 6443)).toEqual({ address: '10.213.32.10', port: 6443 });
    expect(conflictingListener(listeners, '0.0.0.0', 6443)).not.toBeNull();
    expect(conflictingListener(listeners, '10.213.32.10', 8080)).not.toBeNull();
    expect(conflictingListener(listeners, '10.213.32.10', 9000)).not.toBeNull();
    expect(conflictingListener(listeners, '10.213.32.11', 6443)).toBeNull();
    expect(conflictingListener(listeners, '10.213.32.10', 6444)).toBeNull();
  });
});
