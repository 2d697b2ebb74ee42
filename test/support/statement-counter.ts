import type { DataSource } from 'typeorm';

interface QueryingClient {
  query: (...args: unknown[]) => unknown;
  [COUNTED]?: true;
}

interface PgPool {
  on(event: 'acquire', listener: (client: QueryingClient) => void): void;
  off(event: 'acquire', listener: (client: QueryingClient) => void): void;
}

const COUNTED = Symbol('counted');

/**
 * Counts the statements (round trips: BEGIN and COMMIT included) a DataSource sends, by wrapping
 * each pooled pg client's `query` as it is checked out. Load-independent, so tests can hold a flow
 * to its round-trip budget.
 */
export class StatementCounter {
  readonly statements: string[] = [];
  private recording = false;
  private readonly pool: PgPool;

  constructor(dataSource: DataSource) {
    const driver = dataSource.driver as unknown as { master: PgPool };
    this.pool = driver.master;
    this.pool.on('acquire', this.wrap);
  }

  /** Runs `work`, answering the statements sent while it ran. */
  async during<T>(work: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
    this.statements.length = 0;
    this.recording = true;
    try {
      const result = await work();
      return { result, statements: [...this.statements] };
    } finally {
      this.recording = false;
    }
  }

  stop(): void {
    this.pool.off('acquire', this.wrap);
  }

  private readonly wrap = (client: QueryingClient): void => {
    if (client[COUNTED]) return;
    client[COUNTED] = true;
    const query = client.query.bind(client);
    client.query = (...args: unknown[]) => {
      if (this.recording) {
        const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string })?.text;
        this.statements.push((text ?? '?').replace(/\s+/g, ' ').trim().slice(0, 120));
      }
      return query(...args);
    };
  };
}
