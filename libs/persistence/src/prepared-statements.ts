import { createHash } from 'node:crypto';
import { Client } from 'pg';

/** Named statements one connection keeps at most; past it, a new text runs unnamed. */
export const PREPARED_STATEMENTS_PER_CONNECTION = 500;

/** The statement's name: the same text always gets the same name, on every connection. */
export function preparedStatementName(text: string): string {
  return `mp_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
}

/**
 * A node-postgres Client that runs every parametrized statement as a named prepared statement,
 * so each connection parses and plans a statement's text once instead of on every execution
 * (PostgreSQL then reuses the plan, or re-plans per execution when a generic plan would cost more,
 * its plan_cache_mode=auto rule). Under load the planner was about 40 % of the database's
 * statement time. TypeORM passes `(text, values)` to the pool's clients, and the pool takes its
 * Client class from its options, so no store changes. Statements without parameters
 * (START TRANSACTION, COMMIT, DDL) stay unnamed, and a connection names at most `limit` texts so
 * a text built at run time cannot grow a backend without bound.
 */
export function preparingClient(limit = PREPARED_STATEMENTS_PER_CONNECTION): typeof Client {
  return class PreparingClient extends Client {
    private readonly named = new Set<string>();

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
