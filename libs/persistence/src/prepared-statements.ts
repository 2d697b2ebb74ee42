import { createHash } from 'node:crypto';
import { Client, type ClientConfig } from 'pg';

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

/**
 * A node-postgres Client that runs every parametrized statement as a named prepared statement,
 * so each connection parses and analyses a statement's text once instead of on every execution
 * (PostgreSQL's CPU per match in the allocation burst fell by about a fifth). Plans stay per
 * execution ({@link PLAN_EVERY_EXECUTION}). TypeORM passes `(text, values)` to the pool's clients,
 * and the pool takes its Client class from its options, so no store changes. Statements without
 * parameters (START TRANSACTION, COMMIT, DDL) stay unnamed, and a connection names at most `limit`
 * texts so a text built at run time cannot grow a backend without bound.
 */
export function preparingClient(limit = PREPARED_STATEMENTS_PER_CONNECTION): typeof Client {
  return class PreparingClient extends Client {
    private readonly named = new Set<string>();

    constructor(config?: string | ClientConfig) {
      const settings = typeof config === 'string' ? { connectionString: config } : (config ?? {});
      super({
        ...settings,
        options: [settings.options, PLAN_EVERY_EXECUTION].filter(Boolean).join(' '),
      });
    }

    // node-postgres overloads query() on its arguments; this override only rewrites (text, values).
    override query(...args: unknown[]): never {
      const [text, values, callback] = args;
      if (typeof text === 'string' && Array.isArray(values) && values.length > 0) {
        const name = preparedStatementName(text);
        if (this.named.has(name) || this.named.size < limit) {
          this.named.add(name);
          return (super.query as (...rest: unknown[]) => never)({ name, text, values }, callback);
        }
      }
      return (super.query as (...rest: unknown[]) => never)(...args);
    }
  };
}
