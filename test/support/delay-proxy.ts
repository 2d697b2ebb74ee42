import { createServer, connect, type Server, type Socket } from 'node:net';

export interface DelayProxy {
  readonly port: number;
  /** Round trip this proxy adds (ms): half of it on each direction. */
  readonly addedRttMs: number;
  close(): Promise<void>;
}

/**
 * A loopback TCP proxy that holds every chunk `addedRttMs / 2` in each direction before passing
 * it on: a connection through it looks that much further away, for the apps as for any client
 * (a region's distance for a probe edge, a slow network for PostgreSQL). Chunks keep their order:
 * the delay is constant, so timers fire in arrival order.
 */
export async function startDelayProxy(options: {
  targetPort: number;
  targetHost?: string;
  addedRttMs: number;
  port?: number;
}): Promise<DelayProxy> {
  const oneWayMs = options.addedRttMs / 2;
  const sockets = new Set<Socket>();
  const relay = (from: Socket, to: Socket): void => {
    from.on('data', (chunk: Buffer) => {
      setTimeout(() => {
        if (!to.destroyed) to.write(chunk);
      }, oneWayMs);
    });
    from.on('end', () => setTimeout(() => to.end(), oneWayMs));
    from.on('error', () => to.destroy());
    from.on('close', () => setTimeout(() => to.destroy(), oneWayMs + 1));
  };
  const server: Server = createServer({ noDelay: true }, (client) => {
    const upstream = connect({
      port: options.targetPort,
      host: options.targetHost ?? '127.0.0.1',
      noDelay: true,
    });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    relay(client, upstream);
    relay(upstream, client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');
  return {
    port: address.port,
    addedRttMs: options.addedRttMs,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
