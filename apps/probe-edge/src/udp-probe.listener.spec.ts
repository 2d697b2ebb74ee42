import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import {
  decodeProbeChallenge,
  KeySet,
  probeMeasurementProblem,
  type ProbeMeasurement,
} from '@matchplane/join-auth';
import { ProbeEdge } from './probe-edge.service';
import { ProbeDatagram, UdpProbeListener } from './udp-probe.listener';

const PLAYER = '6f1c2a4e-0b7d-4c1e-9a53-2f8d1e7b4c90';
const keys = KeySet.fromKeys({ 'probe-1': randomBytes(32) });

describe(UdpProbeListener.name, () => {
  const listener = new UdpProbeListener(
    new ProbeEdge('eu-west', { keys, activeKeyId: 'probe-1' }, 5_000),
    { host: '127.0.0.1', port: 0 },
  );
  let client: Socket;
  const inbox: Buffer[] = [];
  let arrived: (() => void) | undefined;

  beforeAll(async () => {
    await listener.onModuleInit();
    client = createSocket('udp4');
    client.on('message', (message) => {
      inbox.push(message);
      arrived?.();
    });
    await new Promise<void>((resolve) => client.bind(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    client.close();
    await listener.onModuleDestroy();
  });

  /** Sends `message` and resolves with the next `count` datagrams back, in arrival order. */
  async function exchange(message: Buffer, count: number): Promise<Buffer[]> {
    inbox.length = 0;
    const all = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${inbox.length} of ${count} back`)), 5_000);
      arrived = () => {
        if (inbox.length < count) return;
        clearTimeout(timer);
        resolve();
      };
    });
    client.send(message, listener.port, '127.0.0.1');
    await all;
    return inbox.splice(0, count);
  }

  function challengeRequest(): Buffer {
    const text = (value: string) => {
      const bytes = Buffer.from(value, 'utf8');
      return Buffer.concat([Buffer.of(bytes.length >> 8, bytes.length & 0xff), bytes]);
    };
    return Buffer.concat([
      Buffer.of(ProbeDatagram.CHALLENGE_REQUEST),
      text(PLAYER),
      text('eu-west'),
    ]);
  }

  it('answers a round with the measurement, then the next challenge, which rounds again', async () => {
    let [challenge] = await exchange(challengeRequest(), 1);
    const measured: string[] = [];
    for (let round = 0; round < 2; round++) {
      expect(challenge![0]).toBe(ProbeDatagram.CHALLENGE);
      const body = challenge!.subarray(1);
      const [measurement, next] = await exchange(
        Buffer.concat([Buffer.of(ProbeDatagram.ROUND), body]),
        2,
      );
      expect(measurement![0]).toBe(ProbeDatagram.MEASUREMENT);
      const signed = JSON.parse(measurement!.subarray(1).toString('utf8')) as ProbeMeasurement;
      expect(signed).toMatchObject({ playerId: PLAYER, region: 'eu-west' });
      expect(probeMeasurementProblem(keys, signed)).toBeUndefined();
      measured.push(signed.measurementId);
      expect(next![0]).toBe(ProbeDatagram.CHALLENGE);
      expect(decodeProbeChallenge(next!.subarray(1))).toMatchObject({
        playerId: PLAYER,
        region: 'eu-west',
      });
      expect(next!.equals(challenge!)).toBe(false);
      challenge = next;
    }
    expect(new Set(measured).size).toBe(2);
  });

  it('answers an altered round with one error datagram and no next challenge', async () => {
    const [challenge] = await exchange(challengeRequest(), 1);
    const altered = Buffer.from(challenge!);
    altered.writeUInt8(altered.readUInt8(altered.length - 1) ^ 0xff, altered.length - 1);
    altered[0] = ProbeDatagram.ROUND;
    const [reply] = await exchange(altered, 1);
    expect(reply![0]).toBe(ProbeDatagram.ERROR);
    expect(reply!.subarray(3, 3 + reply!.readUInt16BE(1)).toString()).toBe('PROBE_BAD_SIGNATURE');
    // Nothing else follows the error.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(inbox).toEqual([]);
  });
});
