import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { testServices } from './test-env';

/**
 * A TCP proxy to the test Redis that can refuse connections, cut the open ones, and hold back
 * what the connections of one name send (Redis slow to answer them, not gone).
 */
export class RedisProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private heldName: string | undefined;
  private readonly releases = new Set<() => void>();
  connections = 0;

  constructor(readonly port: number) {}

  /** From now on, commands of connections named `...name` wait until {@link release}. */
  hold(name: string): void {
    this.heldName = name;
  }

  release(): void {
    this.heldName = undefined;
    for (const release of this.releases) release();
    this.releases.clear();
  }

  open(): Promise<void> {
    const server = createServer((downstream) => {
      this.connections += 1;
      const upstream = createConnection(testServices.redisPort, testServices.redisHost);
      for (const socket of [downstream, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      this.forward(downstream, upstream);
      upstream.pipe(downstream);
      const end = () => {
        downstream.destroy();
        upstream.destroy();
      };
      downstream.on('close', end);
      upstream.on('close', end);
    });
    this.server = server;
    return new Promise((resolve) => server.listen(this.port, '127.0.0.1', resolve));
  }

  /** Client to Redis, held back while the connection's name (CLIENT SETNAME) is the held one. */
  private forward(downstream: Socket, upstream: Socket): void {
    // CLIENT SETNAME is among a connection's first commands.
    let opening = '';
    const held: Buffer[] = [];
    downstream.on('data', (chunk: Buffer) => {
      if (opening.length < 4096) opening += chunk.toString('latin1');
      const name = this.heldName;
      if (held.length === 0 && (name === undefined || !opening.includes(name))) {
        upstream.write(chunk);
        return;
      }
      held.push(chunk);
      if (held.length === 1) {
        this.releases.add(() => {
          for (const part of held.splice(0)) upstream.write(part);
        });
      }
    });
  }

  /** Closes the listener and every proxied connection: Redis is gone for the API. */
  cut(): void {
    this.server?.close();
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    this.cut();
    await Promise.resolve();
  }
}
