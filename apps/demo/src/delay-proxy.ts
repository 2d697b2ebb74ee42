import { createServer, connect, type Server, type Socket } from 'node:net';

export interface DelayProxy {
  readonly port: number;
  /** Round trip this proxy adds (ms): half of it on each direction. */
  readonly addedRttMs: number;
  close(): Promise<void>;
}

/** Early margin of the timer; the rest is spun out on the clock, as a timer alone fires late. */
const SPIN_NS = 3_000_000n;

/**
 * One direction of a connection: what arrives goes out `oneWayNs` later, in arrival order (a FIFO
 * released by one pump, so a late timer can never let a later chunk overtake an earlier one), and
 * the end follows the last chunk. A timer wakes the pump a little early and setImmediate turns
 * until the head is due: a bare setTimeout added several ms per hop on a loaded machine.
 */
function delayedPipe(to: Socket, oneWayNs: bigint): { push(chunk: Buffer | 'end'): void } {
  const queue: { dueNs: bigint; item: Buffer | 'end' }[] = [];
  let pumping = false;
  const pump = (): void => {
    const now = process.hrtime.bigint();
    while (queue.length > 0 && queue[0]!.dueNs <= now) {
      const { item } = queue.shift()!;
      if (to.destroyed) continue;
      if (item === 'end') to.end();
      else to.write(item);
    }
    const head = queue[0];
    if (head === undefined) {
      pumping = false;
      return;
    }
    const waitMs = Number((head.dueNs - now - SPIN_NS) / 1_000_000n);
    if (waitMs > 0) setTimeout(pump, waitMs);
    else setImmediate(pump);
  };
  return {
    push(item) {
      queue.push({ dueNs: process.hrtime.bigint() + oneWayNs, item });
      if (!pumping) {
        pumping = true;
        pump();
      }
    },
  };
}

/**
 * A loopback TCP proxy that holds every chunk `addedRttMs / 2` in each direction before passing
 * it on: a connection through it looks that much further away, for the apps as for any client
 * (a region's distance for a probe edge, a slow network for PostgreSQL).
 */
export async function startDelayProxy(options: {
  targetPort: number;
  targetHost?: string;
  addedRttMs: number;
  port?: number;
}): Promise<DelayProxy> {
  const oneWayNs = BigInt(Math.round((options.addedRttMs / 2) * 1e6));
  const sockets = new Set<Socket>();
  const relay = (from: Socket, to: Socket): void => {
    const pipe = delayedPipe(to, oneWayNs);
    from.on('data', (chunk: Buffer) => pipe.push(chunk));
    from.on('end', () => pipe.push('end'));
    // A reset is passed on at once: nothing more will arrive in either direction.
    from.on('error', () => to.destroy());
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
