import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '@matchplane/config';
import { AllocatorConfig } from '../allocator.config';
import type { StaticServer } from '@matchplane/allocation';
import type { ServerHandOff } from '@matchplane/contracts';
import { HttpStaticHandOff } from './static-handoff';

const HAND_OFF: ServerHandOff = {
  serverId: 'gs-1',
  matchId: '00000000-0000-4000-8000-000000000001',
  credential: 'secret',
  apiUrl: 'http://127.0.0.1:3000',
  endpoint: '127.0.0.1:7777',
};

/**
 * A raw HTTP/1.1 endpoint: answers `status` with keep-alive, and resets a kept-alive connection
 * at its second request when `resetReused` (a server that dropped an idle connection).
 */
class HandOffEndpoint {
  readonly requests: { socket: number; head: string }[] = [];
  private readonly sockets = new Set<Socket>();
  private server?: Server;
  private connections = 0;

  constructor(
    private readonly status: number,
    private readonly resetReused: boolean,
  ) {}

  async start(): Promise<number> {
    this.server = createServer((socket) => {
      const id = (this.connections += 1);
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      let served = 0;
      socket.on('data', (chunk: Buffer) => {
        const head = chunk.toString('latin1');
        if (!head.startsWith('POST ')) return;
        this.requests.push({ socket: id, head });
        served += 1;
        if (this.resetReused && served > 1) {
          socket.resetAndDestroy();
          return;
        }
        socket.write(
          `HTTP/1.1 ${this.status} X\r\nconnection: keep-alive\r\ncontent-length: 0\r\n\r\n`,
        );
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** Runs `test` against a fresh endpoint and a hand-off pointed at it, cleaning both up. */
async function withEndpoint(
  endpoint: HandOffEndpoint,
  test: (handOff: HttpStaticHandOff, server: StaticServer) => Promise<void>,
): Promise<void> {
  const port = await endpoint.start();
  const handOff = new HttpStaticHandOff(
    loadConfig(AllocatorConfig, {
      JOIN_KEYS_FILE: '/unused',
      ALLOCATION_PROVIDER: 'static',
      STATIC_SERVERS: `gs-1=127.0.0.1:${port}`,
      STATIC_HANDOFF_URL: 'http://{host}:{port}/handoff/{id}',
    }),
  );
  try {
    await test(handOff, { id: 'gs-1', host: '127.0.0.1', port });
  } finally {
    handOff.onApplicationShutdown();
    await endpoint.stop();
  }
}

describe(HttpStaticHandOff.name, () => {
  it('POSTs the hand-off JSON and reuses one kept-alive connection', async () => {
    const endpoint = new HandOffEndpoint(204, false);
    await withEndpoint(endpoint, async (handOff, server) => {
      await handOff.deliver(server, HAND_OFF);
      await handOff.deliver(server, HAND_OFF);
      expect(endpoint.requests.map((r) => r.socket)).toEqual([1, 1]);
      expect(endpoint.requests[0]?.head).toMatch(/^POST \/handoff\/gs-1 HTTP\/1.1\r\n/);
      expect(endpoint.requests[0]?.head).toContain(JSON.stringify(HAND_OFF));
    });
  });

  it('repeats a hand-off once on a fresh connection when a kept-alive one was reset', async () => {
    const endpoint = new HandOffEndpoint(204, true);
    await withEndpoint(endpoint, async (handOff, server) => {
      await handOff.deliver(server, HAND_OFF);
      await handOff.deliver(server, HAND_OFF);
      // The second went out on the first connection, was reset, and went again on a new one.
      expect(endpoint.requests.map((r) => r.socket)).toEqual([1, 1, 2]);
    });
  });

  it('refuses a non-2xx answer, naming the URL and not the credential', async () => {
    await withEndpoint(new HandOffEndpoint(500, false), async (handOff, server) => {
      const failure = handOff.deliver(server, HAND_OFF);
      await expect(failure).rejects.toThrow(
        `hand-off to server gs-1 at http://127.0.0.1:${server.port}/handoff/gs-1 answered 500`,
      );
      await expect(failure).rejects.not.toThrow(/secret/);
    });
  });
});
