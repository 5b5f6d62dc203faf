import { describe, expect, it } from 'vitest';
import { renderServiceRules, SERVICES_CHAIN, type EndpointSliceLike, type ServiceLike } from '../../src/nodelet/pod-network/index.js';

type ServicePorts = NonNullable<ServiceLike['spec']>['ports'];

const svc = (namespace: string, name: string, clusterIP: string, ports: ServicePorts, type?: string): ServiceLike => ({
  metadata: { namespace, name },
  spec: { clusterIP, ports, type },
});

const slice = (
  namespace: string,
  service: string,
  name: string,
  endpoints: EndpointSliceLike['endpoints'],
  ports: EndpointSliceLike['ports'],
): EndpointSliceLike => ({
  metadata: { namespace, name, labels: { 'kubernetes.io/service-name': service } },
  addressType: 'IPv4',
  endpoints,
  ports,
});

const lines = (text: string) => text.split('\n');
const dnats = (text: string) => lines(text).filter((l) => l.includes('-j DNAT'));

describe('ClusterIP rules for a pod namespace', () => {
  const web = svc('demo', 'web', '10.96.0.50', [
    { name: 'http', port: 80, protocol: 'TCP' },
    { name: 'metrics', port: 9090 },
  ]);
  const webSlices = [
    slice(
      'demo',
      'web',
      'web-a',
      [{ addresses: ['10.213.33.5'], conditions: { ready: true } }, { addresses: ['10.213.33.6'] }],
      [
        { name: 'http', port: 8080, protocol: 'TCP' },
        { name: 'metrics', port: 9100, protocol: 'TCP' },
      ],
    ),
    slice(
      'demo',
      'web',
      'web-b',
      [{ addresses: ['10.213.33.7'], conditions: { ready: true } }],
      [
        { name: 'http', port: 8080, protocol: 'TCP' },
        { name: 'metrics', port: 9100, protocol: 'TCP' },
      ],
    ),
  ];

  it('replaces the nat and filter tables whole, in iptables-restore form', () => {
    const text = renderServiceRules([web], webSlices);
    const l = lines(text);
    expect(l[0]).toBe('*nat');
    expect(l).toContain(':OUTPUT ACCEPT [0:0]');
    expect(l).toContain(`:${SERVICES_CHAIN} - [0:0]`);
    expect(l).toContain(`-A OUTPUT -m comment --comment "ocm-lab: ClusterIP services" -j ${SERVICES_CHAIN}`);
    expect(l.filter((x) => x === 'COMMIT')).toHaveLength(2);
    expect(l).toContain('*filter');
    expect(text.endsWith('COMMIT\n')).toBe(true);
  });

  it('sends each ClusterIP:port to one of its endpoints at random, with equal weight, at the target port of the same name', () => {
    const text = renderServiceRules([web], webSlices);
    const jump = lines(text).find((l) => l.startsWith(`-A ${SERVICES_CHAIN} -d 10.96.0.50/32 -p tcp -m tcp --dport 80 `))!;
    expect(jump).toContain('--comment "demo/web:http:TCP"');
    const chain = jump.split(' -j ')[1]!;
    expect(chain).toMatch(/^OCMLAB-SVC-[0-9A-F]{16}$/);
    expect(chain.length).toBeLessThanOrEqual(28);
    const http = lines(text).filter((l) => l.startsWith(`-A ${chain} `));
    expect(http).toEqual([
      `-A ${chain} -m statistic --mode random --probability 0.3333333333 -p tcp -m tcp -j DNAT --to-destination 10.213.33.5:8080`,
      `-A ${chain} -m statistic --mode random --probability 0.5000000000 -p tcp -m tcp -j DNAT --to-destination 10.213.33.6:8080`,
      `-A ${chain} -p tcp -m tcp -j DNAT --to-destination 10.213.33.7:8080`,
    ]);
    expect(dnats(text).filter((l) => l.endsWith(':9100'))).toHaveLength(3);
  });

  it('leaves out endpoints that are not ready, and uses serving terminating ones only when none is ready', () => {
    const s = svc('demo', 'api', '10.96.0.60', [{ port: 443 }]);
    const mixed = slice(
      'demo',
      'api',
      'api-x',
      [
        { addresses: ['10.213.33.8'], conditions: { ready: false } },
        { addresses: ['10.213.33.9'], conditions: { ready: true } },
        { addresses: ['10.213.33.10'], conditions: { ready: false, serving: true, terminating: true } },
      ],
      [{ port: 8443 }],
    );
    expect(dnats(renderServiceRules([s], [mixed]))).toEqual([expect.stringContaining('--to-destination 10.213.33.9:8443')]);
    const draining = slice(
      'demo',
      'api',
      'api-x',
      [
        { addresses: ['10.213.33.8'], conditions: { ready: false } },
        { addresses: ['10.213.33.10'], conditions: { ready: false, serving: true, terminating: true } },
      ],
      [{ port: 8443 }],
    );
    expect(dnats(renderServiceRules([s], [draining]))).toEqual([expect.stringContaining('--to-destination 10.213.33.10:8443')]);
  });

  it('rejects a ClusterIP port without endpoints (connection refused), as kube-proxy does', () => {
    const text = renderServiceRules([svc('demo', 'empty', '10.96.0.70', [{ port: 80 }, { port: 53, protocol: 'UDP' }])], []);
    expect(dnats(text)).toEqual([]);
    expect(lines(text)).toContain(
      '-A OUTPUT -d 10.96.0.70/32 -p tcp -m tcp --dport 80 -m comment --comment "demo/empty::TCP has no endpoints" -j REJECT --reject-with icmp-port-unreachable',
    );
    expect(lines(text)).toContain(
      '-A OUTPUT -d 10.96.0.70/32 -p udp -m udp --dport 53 -m comment --comment "demo/empty::UDP has no endpoints" -j REJECT --reject-with icmp-port-unreachable',
    );
  });

  it('matches slices by namespace, service label, port name and protocol', () => {
    const s = svc('demo', 'dns', '10.96.0.10', [
      { name: 'dns', port: 53, protocol: 'UDP' },
      { name: 'dns-tcp', port: 53, protocol: 'TCP' },
    ]);
    const slices = [
      slice('other', 'dns', 'wrong-ns', [{ addresses: ['10.213.33.1'] }], [{ name: 'dns', port: 5353, protocol: 'UDP' }]),
      slice(
        'demo',
        'dns',
        'ok',
        [{ addresses: ['10.213.33.2'] }],
        [
          { name: 'dns', port: 5353, protocol: 'UDP' },
          { name: 'dns-tcp', port: 5354, protocol: 'TCP' },
        ],
      ),
      { ...slice('demo', 'dns', 'v6', [{ addresses: ['fd00::1'] }], [{ name: 'dns', port: 5353, protocol: 'UDP' }]), addressType: 'IPv6' },
    ];
    const text = renderServiceRules([s], slices);
    expect(dnats(text).map((l) => l.replace(/^-A \S+ /, ''))).toEqual(
      expect.arrayContaining(['-p udp -m udp -j DNAT --to-destination 10.213.33.2:5353', '-p tcp -m tcp -j DNAT --to-destination 10.213.33.2:5354']),
    );
    expect(dnats(text)).toHaveLength(2);
  });

  it('skips headless and ExternalName services', () => {
    const text = renderServiceRules([svc('demo', 'headless', 'None', [{ port: 80 }]), svc('demo', 'ext', '', [{ port: 80 }], 'ExternalName')], []);
    expect(lines(text).filter((l) => l.startsWith('-A ') && !l.startsWith('-A OUTPUT -m comment'))).toEqual([]);
  });

  it('sends the kubernetes service to the API server when its EndpointSlice has no endpoint yet', () => {
    const k = svc('default', 'kubernetes', '10.96.0.1', [{ name: 'https', port: 443 }]);
    expect(dnats(renderServiceRules([k], [], { apiServer: { ip: '10.213.32.10', port: 6443 } }))).toEqual([
      expect.stringContaining('--to-destination 10.213.32.10:6443'),
    ]);
    const fromSlice = slice('default', 'kubernetes', 'kubernetes', [{ addresses: ['10.213.32.10'] }], [{ name: 'https', port: 6443, protocol: 'TCP' }]);
    expect(dnats(renderServiceRules([k], [fromSlice], { apiServer: { ip: '10.9.9.9', port: 1 } }))).toEqual([
      expect.stringContaining('--to-destination 10.213.32.10:6443'),
    ]);
  });

  it('renders the same text for the same objects in any order', () => {
    const other = svc('a', 'b', '10.96.1.1', [{ port: 1 }]);
    expect(renderServiceRules([web, other], webSlices)).toBe(renderServiceRules([other, web], [...webSlices].reverse()));
  });
});
