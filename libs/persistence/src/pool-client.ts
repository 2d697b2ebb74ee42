import { createHash } from 'node:crypto';
import type { Writable } from 'node:stream';
import { Client, type ClientConfig, type QueryResult } from 'pg';
import type { EntityManager } from 'typeorm';

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
  /**
   * DATABASE_PIPELINING: START TRANSACTION travels with the transaction's first statement, and a
   * {@link sendWithNext} statement with the next one (a last write with the COMMIT).
   */
  readonly pipelining: boolean;
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
 * - Pipelining: START TRANSACTION is answered at once and held until the transaction's
 *   next statement, then both go out in one write (node-postgres' pipeline mode sends a query
 *   without waiting for the one before). Waiting for BEGIN's answer cost every transaction a
 *   round trip, and on a loaded 2-core machine each round trip is a wake-up of both processes.
 *   A failed BEGIN (only a broken connection fails it) is reported by that next statement. A
 *   store's last write, whose answer nobody reads, is held the same way until the COMMIT
 *   ({@link sendWithNext}).
 */
export function poolClient(options: PoolClientOptions): typeof Client {
  const limit = options.preparedLimit ?? PREPARED_STATEMENTS_PER_CONNECTION;
  return class MatchplaneClient extends Client {
    /** Text → name of the statements this connection prepared (hashed once per connection). */
    private readonly named = new Map<string, string>();
    /** Statements answered already and not yet sent: they go out with the next one. */
    private readonly held: unknown[][] = [];

    constructor(config?: string | ClientConfig) {
      const settings = typeof config === 'string' ? { connectionString: config } : (config ?? {});
      super({
        ...settings,
        ...(options.pipelining ? { pipeline: true } : {}),
        ...(options.preparedStatements
          ? { options: [settings.options, PLAN_EVERY_EXECUTION].filter(Boolean).join(' ') }
          : {}),
      });
    }

    // node-postgres overloads query() on its arguments; this override holds a bare
    // START TRANSACTION, sends what is held with the next statement, and names (text, values).
    override query(...args: unknown[]): never {
      const [text, values, callback] = args;
      const startsTransaction =
        text === TRANSACTION_START && values === undefined && callback === undefined;
      if (options.pipelining && startsTransaction && this.held.length === 0) {
        this.held.push([TRANSACTION_START]);
        return Promise.resolve(TRANSACTION_STARTED) as never;
      }
      if (this.held.length === 0) return this.send(args);
      return this.sendAfterHeld(args, this.held.splice(0));
    }

    /**
     * {@link sendWithNext}'s half: `text` is answered now and sent with the next statement.
     * False where this client does not pipeline (the caller runs it itself).
     */
    holdUntilNext(text: string, values: readonly unknown[]): boolean {
      if (!options.pipelining) return false;
      this.held.push([text, values]);
      return true;
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

    /**
     * The held statements and this one, in one write. A held statement's error wins: the
     * statement it travelled with would fail as "transaction aborted", or a COMMIT would quietly
     * answer ROLLBACK. A ROLLBACK keeps its own answer (the transaction is undone either way).
     */
    private sendAfterHeld(args: unknown[], held: unknown[][]): never {
      const stream = (this as unknown as { connection: { stream: Writable } }).connection.stream;
      const rollsBack = args[0] === 'ROLLBACK';
      let heldError: unknown;
      const last = args[args.length - 1];
      if (typeof last === 'function') {
        const callback = last as QueryCallback;
        args[args.length - 1] = (error: Error | null, result?: unknown) =>
          callback(rollsBack ? error : ((heldError as Error | undefined) ?? error), result);
      }
      stream.cork();
      try {
        for (const statement of held) {
          void (this.send(statement) as Promise<unknown>).catch((error: unknown) => {
            heldError ??= error;
          });
        }
        const sent = this.send(args) as unknown;
        if (!(sent instanceof Promise) || rollsBack) return sent as never;
        return sent.then(
          (result: unknown) => {
            if (heldError !== undefined) throw heldError as Error;
            return result;
          },
          (error: unknown) => {
            throw (heldError ?? error) as Error;
          },
        ) as never;
      } finally {
        stream.uncork();
      }
    }
  };
}

/**
 * Sends a statement of the open transaction whose answer nobody reads in one write with the
 * transaction's next statement, instead of waiting for its answer first: one round trip fewer.
 * A transaction's last write so goes out with the COMMIT. If it fails, the next statement fails
 * with its error (a COMMIT then keeps nothing); a statement sent after it sees what it wrote.
 * Where the pool's client does not pipeline (`DATABASE_PIPELINING=false`), or outside a
 * transaction, it simply runs it.
 */
export async function sendWithNext(
  manager: EntityManager,
  text: string,
  values: readonly unknown[],
): Promise<void> {
  const client = (manager.queryRunner as { databaseConnection?: unknown } | undefined)
    ?.databaseConnection as {
    holdUntilNext?: (text: string, values: readonly unknown[]) => boolean;
  };
  if (manager.queryRunner?.isTransactionActive && client?.holdUntilNext?.(text, values)) return;
  await manager.query(text, [...values]);
}
