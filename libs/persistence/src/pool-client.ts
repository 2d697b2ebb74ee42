import { createHash } from 'node:crypto';
import type { Writable } from 'node:stream';
import { Client, type ClientConfig, type QueryResult } from 'pg';

/** Named statements one connection keeps at most; past it, a new text runs unnamed. */
export const PREPARED_STATEMENTS_PER_CONNECTION = 500;

/** The statement's name: the same text always gets the same name, on every connection. */
export function preparedStatementName(text: string): string {
  return `mp_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
}

/**
 * Sent with the connection: every execution of a prepared statement is planned for its values.
 * Under plan_cache_mode=auto PostgreSQL may settle on a generic plan, made once without the
 * values; one made while the outbox was nearly empty froze a join that later ran for minutes
 * under bench:outbox, and an array parameter's length is unknown to any generic plan.
 */
const PLAN_EVERY_EXECUTION = '-c plan_cache_mode=force_custom_plan';

/** What TypeORM's QueryRunner.startTransaction sends, alone and without parameters. */
const TRANSACTION_START = 'START TRANSACTION';

/** The answer a held START TRANSACTION gets at once: what PostgreSQL answers to it. */
const TRANSACTION_STARTED = {
  command: 'BEGIN',
  rowCount: null,
  oid: 0,
  rows: [],
  fields: [],
} as unknown as QueryResult;

export interface PoolClientOptions {
  /** DATABASE_PREPARED_STATEMENTS: parametrized statements run as named prepared statements. */
  readonly preparedStatements: boolean;
  /** DATABASE_PIPELINED_BEGIN: START TRANSACTION travels with the transaction's first statement. */
  readonly pipelinedBegin: boolean;
  /** Texts one connection names at most (tests lower it). */
  readonly preparedLimit?: number;
}

type QueryCallback = (error: Error | null, result?: unknown) => void;

/**
 * The node-postgres Client class of the pool (TypeORM passes `(text, values)` to the pool's
 * clients, and the pool takes its Client class from its options, so no store changes):
 *
 * - Prepared statements: every parametrized statement runs as a named prepared statement, so
 *   each connection parses and analyses a text once instead of on every execution (PostgreSQL's
 *   CPU per match in the allocation burst fell by about a fifth). Plans stay per execution
 *   ({@link PLAN_EVERY_EXECUTION}). Statements without parameters (START TRANSACTION, COMMIT,
 *   DDL) stay unnamed, and a connection names at most `preparedLimit` texts so a text built at
 *   run time cannot grow a backend without bound.
 * - Pipelined BEGIN: START TRANSACTION is answered at once and held until the transaction's
 *   next statement, then both go out in one write (node-postgres' pipeline mode sends a query
 *   without waiting for the one before). Waiting for BEGIN's answer cost every transaction a
 *   round trip, and on a loaded 2-core machine each round trip is a wake-up of both processes.
 *   A failed BEGIN (only a broken connection fails it) is reported by that next statement.
 */
export function poolClient(options: PoolClientOptions): typeof Client {
  const limit = options.preparedLimit ?? PREPARED_STATEMENTS_PER_CONNECTION;
  return class MatchplaneClient extends Client {
    /** Text → name of the statements this connection prepared (hashed once per connection). */
    private readonly named = new Map<string, string>();
    private beginHeld = false;

    constructor(config?: string | ClientConfig) {
      const settings = typeof config === 'string' ? { connectionString: config } : (config ?? {});
      super({
        ...settings,
        ...(options.pipelinedBegin ? { pipeline: true } : {}),
        ...(options.preparedStatements
          ? { options: [settings.options, PLAN_EVERY_EXECUTION].filter(Boolean).join(' ') }
          : {}),
      });
    }

    // node-postgres overloads query() on its arguments; this override only holds a bare
    // START TRANSACTION and rewrites (text, values).
    override query(...args: unknown[]): never {
      const [text, values, callback] = args;
      const startsTransaction =
        text === TRANSACTION_START && values === undefined && callback === undefined;
      if (options.pipelinedBegin && startsTransaction && !this.beginHeld) {
        this.beginHeld = true;
        return Promise.resolve(TRANSACTION_STARTED) as never;
      }
      if (!this.beginHeld) return this.send(args);
      this.beginHeld = false;
      return this.sendAfterBegin(args);
    }

    private send(args: unknown[]): never {
      const [text, values, callback] = args;
      if (
        options.preparedStatements &&
        typeof text === 'string' &&
        Array.isArray(values) &&
        values.length > 0
      ) {
        let name = this.named.get(text);
        if (name === undefined && this.named.size < limit) {
          name = preparedStatementName(text);
          this.named.set(text, name);
        }
        if (name !== undefined) {
          return (super.query as (...rest: unknown[]) => never)({ name, text, values }, callback);
        }
      }
      return (super.query as (...rest: unknown[]) => never)(...args);
    }

    /** The held START TRANSACTION and this statement, in one write; BEGIN's error wins. */
    private sendAfterBegin(args: unknown[]): never {
      const stream = (this as unknown as { connection: { stream: Writable } }).connection.stream;
      let beginError: unknown;
      const last = args[args.length - 1];
      if (typeof last === 'function') {
        const callback = last as QueryCallback;
        args[args.length - 1] = (error: Error | null, result?: unknown) =>
          callback((beginError as Error | undefined) ?? error, result);
      }
      stream.cork();
      try {
        void (super.query(TRANSACTION_START) as Promise<unknown>).catch((error: unknown) => {
          beginError = error;
        });
        const sent = this.send(args) as unknown;
        if (!(sent instanceof Promise)) return sent as never;
        return sent.then(
          (result: unknown) => {
            if (beginError !== undefined) throw beginError as Error;
            return result;
          },
          (error: unknown) => {
            throw (beginError ?? error) as Error;
          },
        ) as never;
      } finally {
        stream.uncork();
      }
    }
  };
}
