import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { decodeProbeChallenge, probeChallengeDatagramBody } from '@matchplane/join-auth';
import { monotonicUs, ProbeEdge } from './probe-edge.service';

/** Byte 0 of every probe datagram (docs/PROBES.md "UDP"). */
export const ProbeDatagram = {
  CHALLENGE_REQUEST: 0x01,
  CHALLENGE: 0x02,
  ANSWER: 0x03,
  MEASUREMENT: 0x04,
  ROUND: 0x05,
  ERROR: 0x7f,
} as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface UdpProbeOptions {
  readonly host: string;
  readonly port: number;
}

/**
 * The edge's UDP mode, for game clients: a request datagram gets one signed challenge datagram
 * back, stamped as it is sent; echoing it gets the signed measurement (JSON, to hand to the API)
 * or an error datagram with the same codes as HTTP. Echoing it as a round gets the measurement and
 * then the next challenge, so each sample after the first is one datagram each way. Lost
 * datagrams are the client's to retry.
 */
@Injectable()
export class UdpProbeListener implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(UdpProbeListener.name);
  private socket: Socket | undefined;

  constructor(
    private readonly edge: ProbeEdge,
    private readonly options: UdpProbeOptions,
  ) {}

  async onModuleInit(): Promise<void> {
    const socket = createSocket('udp4');
    socket.on('message', (message, remote) => this.receive(message, remote, monotonicUs()));
    socket.on('error', (error) => this.logger.error(`udp: ${error.message}`));
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(this.options.port, this.options.host, () => resolve());
    });
    this.socket = socket;
    this.logger.log(`probe-edge udp on ${this.options.host}:${this.options.port}`);
  }

  /** The bound port (the configured one, or the one the OS chose for 0). */
  get port(): number {
    return this.socket?.address().port ?? this.options.port;
  }

  onModuleDestroy(): Promise<void> {
    return new Promise((resolve) => (this.socket ? this.socket.close(() => resolve()) : resolve()));
  }

  private receive(message: Buffer, remote: RemoteInfo, receivedAtUs: number): void {
    try {
      if (message[0] === ProbeDatagram.CHALLENGE_REQUEST) {
        this.challenge(parseRequest(message.subarray(1)), remote);
      } else if (message[0] === ProbeDatagram.ANSWER) {
        this.answer(message.subarray(1), remote, receivedAtUs);
      } else if (message[0] === ProbeDatagram.ROUND) {
        const { playerId, region } = this.answer(message.subarray(1), remote, receivedAtUs);
        this.challenge({ playerId, region }, remote);
      } else {
        throw new CodedError(ErrorCode.VALIDATION_FAILED, 'unknown datagram type');
      }
    } catch (error) {
      const coded = error instanceof CodedError ? (error as CodedError) : undefined;
      if (!coded) this.logger.error(`udp: ${String(error)}`);
      this.send(
        errorDatagram(coded?.code ?? ErrorCode.INTERNAL, coded?.message ?? 'internal'),
        remote,
      );
    }
  }

  private challenge(request: { playerId: string; region: string }, remote: RemoteInfo): void {
    // Issued (stamped and signed) as the last step before the datagram is handed to the socket.
    const challenge = this.edge.issue(request.playerId, request.region);
    this.send(
      Buffer.concat([Buffer.of(ProbeDatagram.CHALLENGE), probeChallengeDatagramBody(challenge)]),
      remote,
    );
  }

  /** Sends the measurement of an echoed challenge; answers whose it was. */
  private answer(
    body: Buffer,
    remote: RemoteInfo,
    receivedAtUs: number,
  ): { playerId: string; region: string } {
    const challenge = decodeProbeChallenge(body);
    if (!challenge) {
      throw new CodedError(ErrorCode.VALIDATION_FAILED, 'not a challenge datagram, echoed back');
    }
    const measurement = this.edge.answer(
      { playerId: challenge.playerId, region: challenge.region, challenge },
      receivedAtUs,
    );
    const json = Buffer.from(JSON.stringify(measurement), 'utf8');
    this.send(Buffer.concat([Buffer.of(ProbeDatagram.MEASUREMENT), json]), remote);
    return { playerId: challenge.playerId, region: challenge.region };
  }

  private send(datagram: Buffer, remote: RemoteInfo): void {
    this.socket?.send(datagram, remote.port, remote.address);
  }
}

/** CHALLENGE_REQUEST body: str16 playerId, str16 region. */
function parseRequest(body: Buffer): { playerId: string; region: string } {
  const fields: string[] = [];
  let offset = 0;
  for (let field = 0; field < 2; field += 1) {
    if (offset + 2 > body.length) break;
    const length = body.readUInt16BE(offset);
    fields.push(body.subarray(offset + 2, offset + 2 + length).toString('utf8'));
    offset += 2 + length;
  }
  const [playerId, region] = fields;
  if (offset !== body.length || playerId === undefined || region === undefined) {
    throw new CodedError(
      ErrorCode.VALIDATION_FAILED,
      'challenge request must be str16 playerId, str16 region',
    );
  }
  if (!UUID.test(playerId)) {
    throw new CodedError(ErrorCode.VALIDATION_FAILED, 'playerId must be a lowercase UUID');
  }
  return { playerId, region };
}

/** ERROR: str16 code, str16 detail. */
function errorDatagram(code: string, detail: string): Buffer {
  const text = (value: string) => {
    const bytes = Buffer.from(value.slice(0, 512), 'utf8');
    const length = Buffer.alloc(2);
    length.writeUInt16BE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  return Buffer.concat([Buffer.of(ProbeDatagram.ERROR), text(code), text(detail)]);
}
