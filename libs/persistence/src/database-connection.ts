import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { Client, type ClientConfig } from 'pg';
import {
  databaseHosts,
  formatHosts,
  type DatabaseConfig,
  type HostAndPort,
  type TargetSessionAttrs,
} from '@matchplane/config';

/** How long one host may take to accept a connection. */
export const CONNECT_TIMEOUT_MS = 5_000;

/**
 * TLS as libpq's sslmode means it (node-postgres' own sslmode parsing differs, and warns): require
 * with a CA verifies against it, as libpq does; verify-ca skips only the name check.
 */
export function databaseTls(config: DatabaseConfig): ConnectionOptions | false {
  const ca =
    config.DATABASE_SSL_CA_FILE === undefined
      ? undefined
      : readFileSync(config.DATABASE_SSL_CA_FILE, 'utf8');
  const anyName = { checkServerIdentity: () => undefined };
  switch (config.DATABASE_SSL_MODE) {
    case 'disable':
      return false;
    case 'require':
      return ca === undefined ? { rejectUnauthorized: false } : { ca, ...anyName };
    case 'verify-ca':
      return { ca, ...anyName };
    case 'verify-full':
      return ca === undefined ? {} : { ca };
  }
}

export interface DatabaseSession {
  readonly user: string;
  readonly password: string | undefined;
  readonly database: string;
  readonly ssl: ConnectionOptions | false;
  readonly application_name: string;
  readonly options?: string;
}

/** What every connection of the apps sends, whichever host it reaches. */
export function databaseSession(
  config: DatabaseConfig,
  applicationName: string,
  extraOptions?: string,
): DatabaseSession {
  // The app's own setting comes last: of two -c settings of one name, PostgreSQL keeps the last.
  const options = [config.DATABASE_OPTIONS, extraOptions].filter(Boolean).join(' ');
  return {
    user: config.DATABASE_USER,
    password: config.DATABASE_PASSWORD,
    database: config.DATABASE_NAME,
    ssl: databaseTls(config),
    application_name: config.DATABASE_APPLICATION_NAME ?? applicationName,
    ...(options === '' ? {} : { options }),
  };
}

interface SessionState {
  in_recovery: boolean;
  read_only: string;
}

/** Whether a connected session is one `attrs` accepts (libpq's checks for the same names). */
async function accepts(client: Client, attrs: TargetSessionAttrs): Promise<boolean> {
  if (attrs === 'any') return true;
  const { rows } = await client.query<SessionState>(
    "SELECT pg_is_in_recovery() AS in_recovery, current_setting('transaction_read_only') AS read_only",
  );
  const [state] = rows;
  if (state === undefined) return false;
  return attrs === 'primary' ? !state.in_recovery : state.read_only === 'off';
}

/** An error PostgreSQL answered (it carries a SQLSTATE), as opposed to one of the network. */
function isServerError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return messageOf(error.errors[0]);
  return error instanceof Error ? error.message || error.name : String(error);
}

/**
 * No listed host takes the connection as DATABASE_TARGET_SESSION_ATTRS asks (all down, or only
 * standbys left while a failover is under way): the database is unavailable, not broken.
 */
export class DatabaseHostUnavailableError extends Error {
  override readonly name = 'DatabaseHostUnavailableError';
}

/**
 * Which of DATABASE_HOST's hosts new connections go to: node-postgres takes one host (its
 * multi-host support is an open pull request, brianc/node-postgres#3643), so the list is walked
 * here, in order, as libpq does. The host found is remembered; a connection to it that fails, is
 * lost, or turns out not to qualify (a demoted primary) forgets it, and the next connection walks
 * the list again with short-lived probe connections.
 */
export class DatabaseHostChooser {
  private chosen: HostAndPort | undefined;
  private finding: Promise<HostAndPort> | undefined;
  readonly hosts: readonly HostAndPort[];

  constructor(
    config: DatabaseConfig,
    private readonly probe: ClientConfig,
  ) {
    this.hosts = databaseHosts(config);
    this.attrs = config.DATABASE_TARGET_SESSION_ATTRS;
  }

  readonly attrs: TargetSessionAttrs;

  /** Nothing to choose: one host, any session. */
  get trivial(): boolean {
    return this.hosts.length === 1 && this.attrs === 'any';
  }

  async choose(): Promise<HostAndPort> {
    if (this.chosen !== undefined) return this.chosen;
    const [only] = this.hosts;
    if (this.hosts.length === 1 && only !== undefined) return only;
    this.finding ??= this.find().finally(() => (this.finding = undefined));
    return this.finding;
  }

  forget(host: HostAndPort): void {
    if (this.chosen === host) this.chosen = undefined;
  }

  /** After connecting to `host`: throws (and forgets it) when the session does not qualify. */
  async check(client: Client, host: HostAndPort): Promise<void> {
    if (await accepts(client, this.attrs)) {
      if (this.hosts.length > 1) this.chosen = host;
      return;
    }
    this.forget(host);
    throw new DatabaseHostUnavailableError(
      `PostgreSQL at ${formatHosts([host])} is not ${this.attrs} (target_session_attrs); the next connection tries the listed hosts again`,
    );
  }

  /**
   * When no host qualifies, a PostgreSQL error one of them answered (no such database, a failed
   * password) is thrown as it is, so callers can tell it by its SQLSTATE; otherwise one error
   * naming each host's reason.
   */
  private async find(): Promise<HostAndPort> {
    const reasons: string[] = [];
    let answered: Error | undefined;
    for (const host of this.hosts) {
      const client = new Client({ ...this.probe, host: host.host, port: host.port });
      try {
        await client.connect();
        if (await accepts(client, this.attrs)) {
          this.chosen = host;
          return host;
        }
        reasons.push(`${formatHosts([host])}: not ${this.attrs}`);
      } catch (error) {
        reasons.push(`${formatHosts([host])}: ${messageOf(error)}`);
        if (answered === undefined && isServerError(error)) answered = error as Error;
      } finally {
        await client.end().catch(() => undefined);
      }
    }
    if (answered !== undefined) throw answered;
    throw new DatabaseHostUnavailableError(
      `no listed PostgreSQL host is ${this.attrs === 'any' ? 'reachable' : this.attrs} (${reasons.join('; ')})`,
    );
  }
}

type ConnectCallback = ((error: Error) => void) | ((error: null, client: Client) => void);

/**
 * `Base` (node-postgres' Client or the pool's own) connecting to the host `chooser` picks, and
 * keeping only a session that DATABASE_TARGET_SESSION_ATTRS accepts. Where there is nothing to
 * choose, `Base` itself.
 */
export function choosingHost(Base: typeof Client, chooser: DatabaseHostChooser): typeof Client {
  if (chooser.trivial) return Base;
  class HostChoosingClient extends Base {
    override connect(): Promise<Client>;
    override connect(callback: ConnectCallback): void;
    override connect(callback?: ConnectCallback): Promise<Client> | void {
      const connected = this.connectToChosenHost();
      if (callback === undefined) return connected;
      connected.then(
        (client) => (callback as (error: null, client: Client) => void)(null, client),
        (error: Error) => (callback as (error: Error) => void)(error),
      );
    }

    private async connectToChosenHost(): Promise<Client> {
      const host = await chooser.choose();
      // The pool's connect timeout destroys the socket; a socket it destroyed while the list was
      // walked would otherwise be revived by connect() and the connection outlive its timeout.
      const { stream } = (this as unknown as { connection: { stream: { destroyed: boolean } } })
        .connection;
      if (stream.destroyed) throw new Error('the connection timed out while choosing a host');
      // Read by node-postgres when it opens the socket (and for TLS's server name).
      this.host = host.host;
      this.port = host.port;
      try {
        await super.connect();
      } catch (error) {
        chooser.forget(host);
        throw error;
      }
      try {
        await chooser.check(this, host);
      } catch (error) {
        await this.end().catch(() => undefined);
        throw error;
      }
      // A lost connection (the primary went away): the next one walks the list again.
      this.on('error', () => chooser.forget(host));
      return this;
    }
  }
  return HostChoosingClient;
}
