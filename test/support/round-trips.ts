import Redis from 'ioredis';
import { Client } from 'pg';

/** What this process sent to PostgreSQL and Redis while a {@link RoundTrips} recorder ran. */
export interface RecordedRoundTrips {
  /** Statements in the order sent (BEGIN and COMMIT included): pg sends one at a time, so each is a round trip. */
  statements: string[];
  /** Redis commands by name (a pipeline's commands share one write). */
  redisCommands: string[];
}

/**
 * Counts PostgreSQL statements and Redis commands issued by everything in this process (the
 * in-process API included) between `start()` and `stop()`: a load-independent measure of what a
 * request costs. Only one recorder may run at a time.
 */
export class RoundTrips {
  private static active: RecordedRoundTrips | undefined;
  private static installed = false;

  static start(): RoundTrips {
    if (RoundTrips.active) throw new Error('a RoundTrips recorder is already running');
    RoundTrips.install();
    RoundTrips.active = { statements: [], redisCommands: [] };
    return new RoundTrips();
  }

  stop(): RecordedRoundTrips {
    const recorded = RoundTrips.active;
    if (!recorded) throw new Error('the RoundTrips recorder was already stopped');
    RoundTrips.active = undefined;
    return recorded;
  }

  private static install(): void {
    if (RoundTrips.installed) return;
    RoundTrips.installed = true;
    const query = Client.prototype.query as (...args: unknown[]) => unknown;
    Client.prototype.query = function (this: Client, ...args: unknown[]) {
      const first = args[0];
      const text = typeof first === 'string' ? first : (first as { text?: string })?.text;
      RoundTrips.active?.statements.push((text ?? '?').replace(/\s+/g, ' ').trim());
      return query.apply(this, args);
    } as typeof Client.prototype.query;
    const sendCommand = Redis.prototype.sendCommand as (...args: unknown[]) => unknown;
    Redis.prototype.sendCommand = function (this: Redis, ...args: unknown[]) {
      const command = args[0] as { name?: string };
      RoundTrips.active?.redisCommands.push(command.name ?? '?');
      return sendCommand.apply(this, args);
    };
  }
}
