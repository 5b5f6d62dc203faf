import { describe, expect, it } from 'vitest';
import { forwardedPorts, parseContainerEvent, PublishedPortTable } from '../support/connected-world/published-ports.js';

// The desktop engine's forwarder (test/support/connected-world/desktop-engine.ts): its handling of the engine's events.
describe('parseContainerEvent', () => {
  it("reads a container's start and die from `docker events --format '{{json .}}'`", () => {
    const start =
      '{"status":"start","id":"abc","from":"registry:2","Type":"container","Action":"start","Actor":{"ID":"abc","Attributes":{"name":"r"}},"scope":"local"}';
    expect(parseContainerEvent(start)).toEqual({ id: 'abc', action: 'start' });
    expect(parseContainerEvent('{"Type":"container","Action":"die","Actor":{"ID":"abc"}}')).toEqual({ id: 'abc', action: 'die' });
    expect(parseContainerEvent('{"Type":"container","Action":"start","id":"def"}')).toEqual({ id: 'def', action: 'start' });
  });

  it('ignores other events, other types and lines that are not JSON', () => {
    expect(parseContainerEvent('{"Type":"container","Action":"create","Actor":{"ID":"abc"}}')).toBeNull();
    expect(parseContainerEvent('{"Type":"container","Action":"exec_start: sh","Actor":{"ID":"abc"}}')).toBeNull();
    expect(parseContainerEvent('{"Type":"network","Action":"start","Actor":{"ID":"n"}}')).toBeNull();
    expect(parseContainerEvent('{"Type":"container","Action":"start","Actor":{}}')).toBeNull();
    expect(parseContainerEvent('not json')).toBeNull();
    expect(parseContainerEvent('null')).toBeNull();
  });
});

describe('forwardedPorts', () => {
  it("takes TCP ports published on the engine's loopback or every address, each once, sorted", () => {
    const ports = {
      '6443/tcp': [{ HostIp: '127.0.0.1', HostPort: '41233' }],
      '5000/tcp': [
        { HostIp: '0.0.0.0', HostPort: '5001' },
        { HostIp: '::', HostPort: '5001' },
      ],
      '80/tcp': [{ HostIp: '', HostPort: '8080' }],
    };
    expect(forwardedPorts(ports)).toEqual([5001, 8080, 41233]);
  });

  it('leaves out UDP, ports bound to another address of the engine, unpublished ports and nonsense', () => {
    const ports = {
      '53/udp': [{ HostIp: '0.0.0.0', HostPort: '5353' }],
      '9000/tcp': [{ HostIp: '10.239.0.1', HostPort: '9000' }],
      '7000/tcp': null,
      '7001/tcp': [{ HostIp: '127.0.0.1', HostPort: 'x' }],
      '7002/tcp': [{ HostIp: '127.0.0.1', HostPort: '70000' }],
    };
    expect(forwardedPorts(ports)).toEqual([]);
    expect(forwardedPorts(null)).toEqual([]);
    expect(forwardedPorts('ports')).toEqual([]);
  });
});

describe('PublishedPortTable', () => {
  it('opens a port on the first container that publishes it and closes it after the last one dies', () => {
    const t = new PublishedPortTable();
    expect(t.started('a', [5001, 41233])).toEqual({ open: [5001, 41233], close: [] });
    expect(t.started('b', [5001])).toEqual({ open: [], close: [] });
    expect(t.stopped('a')).toEqual({ open: [], close: [41233] });
    expect(t.stopped('b')).toEqual({ open: [], close: [5001] });
    expect([...t.held()]).toEqual([]);
  });

  it('a restart (start without die) opens only what is new and closes what it no longer publishes', () => {
    const t = new PublishedPortTable();
    t.started('a', [1000, 2000]);
    expect(t.started('a', [2000, 3000])).toEqual({ open: [3000], close: [1000] });
    expect([...t.held()].sort()).toEqual([2000, 3000]);
  });

  it('a die of a container it never saw start, or a second die, closes nothing', () => {
    const t = new PublishedPortTable();
    t.started('a', [1000]);
    expect(t.stopped('zzz')).toEqual({ open: [], close: [] });
    expect(t.stopped('a')).toEqual({ open: [], close: [1000] });
    expect(t.stopped('a')).toEqual({ open: [], close: [] });
  });
});
