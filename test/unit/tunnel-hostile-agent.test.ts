import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startProxyAgent, type ProxyAgent } from '../../src/tunnel/index.js';
import { encodePacket, PacketType, type Packet } from '../../src/tunnel/packet.js';
import { CONNECT_METHOD, Header, deserialize, type WirePacket } from '../../src/tunnel/wire.js';
import { echo, makeTunnelPKI, peerTLS, startTarget, until, type Target, type TunnelPKI } from '../support/tunnel/fixture.js';
import { Counts, OVERSIZED_BYTES, Rng, closedLoopbackPort, fuzzSeed, hostilePacket, unknownTypePacket } from '../support/tunnel/hostile.js';

// Hostile input on the proxy-agent's side of /AgentService/Connect: a stand-in
// server (plain grpc-js, our certificates) that the real agent connects to and
// that sends it what a broken or hostile proxy-server might.

const seed = fuzzSeed();
const counts = new Counts();
let pki: TunnelPKI;
let target: Target;
let fake: grpc.Server;
let agent: ProxyAgent;
let closedPort: number;
const logs: string[] = [];
/** The agent's current Connect stream, and everything it sent on it. */
let link: { call: grpc.ServerDuplexStream<WirePacket, Buffer>; received: WirePacket[]; ended: boolean } | undefined;
let links = 0;

function send(p: Packet | Buffer): void {
  link!.call.write(Buffer.isBuffer(p) ? p : encodePacket(p));
}

async function answer<T extends WirePacket>(what: string, pred: (p: WirePacket) => p is T, from = 0): Promise<T> {
  let hit: T | undefined;
  await until(what, () => (hit = link!.received.slice(from).find(pred)) !== undefined, 10_000);
  return hit!;
}

let nextRandom = 1000n;
/** Opens a connection to the echo target through the agent, over the current link; returns a probe. */
async function connection(): Promise<{ connectID: bigint; probe: () => Promise<void> }> {
  const random = nextRandom++;
  send({ type: PacketType.DIAL_REQ, protocol: 'tcp', address: 'cluster1:443', random });
  const rsp = await answer(`DIAL_RSP ${random}`, (p): p is WirePacket & { type: 1 } => p.type === PacketType.DIAL_RSP && p.random === random);
  expect(rsp.error).toBe('');
  const connectID = rsp.connectID;
  const current = link!;
  return {
    connectID,
    probe: async () => {
      const data = Buffer.from(`probe ${Math.random()}`);
      const from = current.received.length;
      current.call.write(encodePacket({ type: PacketType.DATA, connectID, error: '', data }));
      let got = Buffer.alloc(0);
      await until(`echo on connection ${connectID}`, () => {
        got = Buffer.concat(
          current.received
            .slice(from)
            .filter((p): p is WirePacket & { type: 4 } => p.type === PacketType.DATA && p.connectID === connectID)
            .map((p) => p.data),
        );
        return got.length >= data.length;
      });
      expect(got.equals(data), `connection ${connectID} echoed exactly what was sent`).toBe(true);
    },
  };
}

beforeAll(async () => {
  pki = await makeTunnelPKI();
  target = await startTarget(echo);
  closedPort = await closedLoopbackPort();
  fake = new grpc.Server({ 'grpc.max_send_message_length': -1 });
  fake.addService(
    {
      Connect: {
        path: CONNECT_METHOD,
        requestStream: true,
        responseStream: true,
        requestSerialize: (b: Buffer) => b,
        requestDeserialize: deserialize,
        responseSerialize: (b: Buffer) => b,
        responseDeserialize: (b: Buffer) => b,
      },
    },
    {
      Connect: (call: grpc.ServerDuplexStream<WirePacket, Buffer>) => {
        const md = new grpc.Metadata();
        md.set(Header.serverID, 'stand-in');
        md.set(Header.serverCount, '1');
        call.sendMetadata(md);
        const l = { call, received: [] as WirePacket[], ended: false };
        call.on('data', (p: WirePacket) => l.received.push(p));
        const gone = (): void => void (l.ended = true);
        call.on('error', gone);
        call.on('cancelled', gone);
        call.on('end', gone);
        link = l;
        links++;
      },
    },
  );
  const creds = grpc.ServerCredentials.createSsl(
    Buffer.from(pki.caPem),
    [{ cert_chain: Buffer.from(pki.server.certPem), private_key: Buffer.from(pki.server.keyPem) }],
    true,
  );
  const port = await new Promise<number>((resolve, reject) => fake.bindAsync('127.0.0.1:0', creds, (err, p) => (err ? reject(err) : resolve(p))));
  agent = await startProxyAgent({
    proxyServerHost: '127.0.0.1',
    proxyServerPort: port,
    agentID: 'cluster1',
    tls: peerTLS(pki, pki.agent),
    hostMappings: { 'cluster1:443': `127.0.0.1:${target.port}` },
    backoff: { initialMs: 50, capMs: 200 },
    log: (l) => logs.push(l),
  });
  await agent.waitForServers(1, 10_000);
  await until('the stand-in server holds the link', () => link !== undefined);
  console.log(`tunnel hostile-input (agent) seed ${seed}; replay with TUNNEL_FUZZ_SEED=${seed}`);
});

afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') console.log(`failed with TUNNEL_FUZZ_SEED=${seed}; agent log:\n${logs.slice(-20).join('\n')}`);
});

afterAll(async () => {
  console.log(counts.render(`tunnel hostile-input (agent), seed ${seed}`));
  await agent?.close();
  fake?.forceShutdown();
  await target?.close();
});

describe('proxy-agent under hostile input from its server', () => {
  it('refuses dials it must not make with a DIAL_RSP error, and stays up (a port out of range used to crash it)', async () => {
    const good = await connection();
    await good.probe();
    const refused: [string, string, RegExp][] = [
      ['udp', `127.0.0.1:${target.port}`, /protocol "udp" is not supported; only tcp/],
      ['unix', '/var/run/docker.sock', /protocol "unix" is not supported/],
      ['tcp', '127.0.0.1:65536', /port 65536 is out of range 1-65535/],
      ['tcp', '127.0.0.1:0', /port 0 is out of range/],
      ['tcp', '127.0.0.1:99999999999999999999', /is out of range/],
      ['tcp', `:${target.port}`, /has no host/],
      ['tcp', '127.0.0.1', /is not host:port/],
      ['tcp', '[::1:443', /is not host:port/],
    ];
    for (const [protocol, address, why] of refused) {
      const random = nextRandom++;
      send({ type: PacketType.DIAL_REQ, protocol, address, random });
      counts.add('agent: DIAL_REQ it must refuse');
      const rsp = await answer(
        `DIAL_RSP for ${protocol} ${address}`,
        (p): p is WirePacket & { type: 1 } => p.type === PacketType.DIAL_RSP && p.random === random,
      );
      expect(rsp.error, `${protocol} ${address}`).toMatch(why);
      await good.probe();
    }
    send({ type: PacketType.DIAL_REQ, protocol: 'tcp', address: `127.0.0.1:${closedPort}`, random: 77n });
    counts.add('agent: DIAL_REQ to a closed loopback port');
    expect((await answer('DIAL_RSP 77', (p): p is WirePacket & { type: 1 } => p.type === PacketType.DIAL_RSP && p.random === 77n)).error).toMatch(
      /ECONNREFUSED/,
    );
    expect(logs.some((l) => /refused a dial from proxy server stand-in: dial address "127\.0\.0\.1:65536": port 65536 is out of range/.test(l))).toBe(true);
    expect(links).toBe(1);
  });

  it('answers or ignores packets about connections and dials it does not have, and ignores unknown types', async () => {
    const good = await connection();
    const from = link!.received.length;
    for (const id of [0n, 999n, -1n, (1n << 63n) - 1n]) {
      send({ type: PacketType.DATA, connectID: id, error: '', data: Buffer.from('nobody') });
      send({ type: PacketType.CLOSE_REQ, connectID: id });
      send({ type: PacketType.FLOW, connectID: id, paused: true });
      counts.add('agent: DATA / CLOSE_REQ / FLOW for an unknown connection', 3);
    }
    for (const p of [
      { type: PacketType.DIAL_CLS, random: 424242n },
      { type: PacketType.DIAL_RSP, random: 1n, connectID: good.connectID, error: '' },
      { type: PacketType.CLOSE_RSP, connectID: good.connectID, error: '' },
      { type: PacketType.DRAIN },
    ] as const) {
      send(p);
      counts.add('agent: packet only an agent or client sends');
    }
    const rng = new Rng(seed);
    for (let i = 0; i < 200; i++) {
      send(unknownTypePacket(rng));
      counts.add('agent: unknown packet type');
    }
    await good.probe();
    const closes = link!.received.slice(from).filter((p) => p.type === PacketType.CLOSE_RSP);
    // CLOSE_REQ for each unknown ID, DATA for each but 0: an error CLOSE_RSP; never for the good connection.
    expect(closes.filter((p) => p.type === PacketType.CLOSE_RSP && p.error !== '')).toHaveLength(7);
    expect(closes.some((p) => p.type === PacketType.CLOSE_RSP && p.connectID === good.connectID)).toBe(false);
    expect(logs.some((l) => /sent a packet of unknown type \d+; ignored/.test(l))).toBe(true);
    expect(links).toBe(1);
  });

  it('survives a seeded storm of well-formed packets, the good connection exact, nothing leaked after the link goes', async () => {
    const good = await connection();
    const rng = new Rng(seed + 1);
    const addresses = ['cluster1:443', `127.0.0.1:${closedPort}`, '127.0.0.1:0', '127.0.0.1:65536', '127.0.0.1', ':1', '[::1'];
    let sent = 0;
    for (let i = 0; i < 2000; i++) {
      const g = hostilePacket(rng, { addresses, malformed: 0 });
      // Packets naming the good connection's ID would be the server's own instructions for it, not hostile.
      if (g.kind === 'DATA' || g.kind === 'CLOSE_REQ' || g.kind === 'FLOW') {
        if ((deserialize(g.bytes) as WirePacket & { connectID: bigint }).connectID === good.connectID) continue;
      }
      send(g.bytes);
      counts.add(`agent storm: ${g.kind}`);
      sent++;
      if (i % 200 === 0) await good.probe();
    }
    await good.probe();
    console.log(`agent storm (seed ${seed}): ${sent} packets on one link`);
    expect(links).toBe(1);
    // The server goes away: the agent releases every socket the storm opened, then reconnects.
    link!.call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'stand-in server going away' });
    await until('the agent released every connection of the lost link', () => agent.activeConnections() === 0 && target.open() === 0);
    await until('the agent reconnected', () => links === 2 && agent.connectedServerIDs().length === 1);
    const fresh = await connection();
    await fresh.probe();
  });

  it('drops only the link that sends malformed or oversized frames, logs why, and reconnects', async () => {
    const cases: [string, Buffer, RegExp][] = [
      ['garbage bytes', Buffer.from('ffffffffffffffffffffff', 'hex'), /Response message parsing error: malformed tunnel packet: varint longer than 10 bytes/],
      ['type contradicts payload', Buffer.from([0x08, 0x02, 0x22, 0x00]), /does not match its payload/],
      [
        'oversized frame (16 MiB + 1 KiB)',
        encodePacket({ type: PacketType.DATA, connectID: 5n, error: '', data: Buffer.alloc(OVERSIZED_BYTES) }),
        /RESOURCE_EXHAUSTED|larger than max/,
      ],
    ];
    for (const [kind, bytes, why] of cases) {
      const before = links;
      const good = await connection();
      await good.probe();
      send(bytes);
      counts.add(`agent: ${kind}`);
      await until(`the agent dropped the link after ${kind}`, () => logs.some((l) => /lost proxy server stand-in/.test(l) && why.test(l)));
      await until(`the agent reconnected after ${kind}`, () => links === before + 1 && agent.connectedServerIDs().length === 1);
      await until('the old link released its connection', () => agent.activeConnections() === 0);
      await (await connection()).probe();
    }
  });
});
