import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { TestFactories } from '../support/factories';
import { REPO_ROOT, freePort } from '../support/processes';
import { deleteRedisPrefix, testRedis, testRedisPrefix } from '../support/redis';

/*
 * `npm run dlq` as operators run it: a child process on the built dist/, against a real database.
 * Dead rows are inserted by raw SQL, as an older dispatcher would have left them.
 */

const ENTRY = path.join(REPO_ROOT, 'dist/apps/api/src/cli/dlq.main.js');

interface CliResult {
  code: number | string;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], env: Record<string, string>): Promise<CliResult> {
  const child = spawn(command, args, {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) =>
    child.once('close', (code, signal) =>
      resolve({ code: code ?? signal ?? 'unknown', stdout, stderr }),
    ),
  );
}

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.length > 0);
}

function jsonLines<T = Record<string, unknown>>(text: string): T[] {
  return lines(text).map((line) => JSON.parse(line) as T);
}

/**
 * An event written by the OutboxWriter and dead-lettered after `attempts` failed deliveries (each
 * failing with "Error: attempt n failed"), as the dispatcher does it (test/support/factories.ts).
 */
async function newDeadLetter(
  ds: DataSource,
  seed: {
    event?: 'ticket.state_changed' | 'match.state_changed';
    aggregateId?: string;
    revision?: number;
    attempts?: number;
  } = {},
): Promise<string> {
  const f = TestFactories.standalone(ds);
  const id = await f.outboxEvent(seed);
  await f.deadLetterOutbox([id], {
    attempts: seed.attempts ?? 2,
    error: (attempt) => `Error: attempt ${attempt} failed`,
  });
  return id;
}

describe('dlq CLI', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const prefix = testRedisPrefix();
  const dlq = (args: string[], extra: Record<string, string> = {}) =>
    run(process.execPath, [ENTRY, ...args], { ...db.env, REDIS_KEY_PREFIX: prefix, ...extra });

  beforeAll(async () => {
    db = await createTestDatabase();
    ds = await db.dataSource();
  });

  afterAll(async () => {
    await db.drop();
    await deleteRedisPrefix(prefix);
  });

  beforeEach(async () => {
    await ds.query('DELETE FROM outbox');
    await ds.query('DELETE FROM audit_log');
  });

  describe('list', () => {
    it('prints one JSON object per dead letter, filtered, and pages with --limit and --cursor', async () => {
      const aggregateId = randomUUID();
      const ids = [
        await newDeadLetter(ds, { event: 'ticket.state_changed', aggregateId, revision: 1 }),
        await newDeadLetter(ds, { event: 'ticket.state_changed', aggregateId, revision: 2 }),
        await newDeadLetter(ds, { event: 'ticket.state_changed', aggregateId, revision: 3 }),
      ];
      await newDeadLetter(ds, { event: 'match.state_changed' });

      const first = await dlq(['list', '--event=ticket.state_changed', '--limit=2', '--json']);
      expect(first).toMatchObject({ code: 0, stderr: '' });
      const [a, b, more] = jsonLines(first.stdout);
      expect([a?.id, b?.id]).toEqual(ids.slice(0, 2));
      expect(a).toMatchObject({
        event: 'ticket.state_changed',
        aggregateId,
        revision: 1,
        attempts: 2,
      });
      expect(more).toEqual({ nextCursor: expect.any(String) as unknown });

      const second = await dlq([
        'list',
        '--event=ticket.state_changed',
        '--limit=2',
        `--cursor=${String(more?.nextCursor)}`,
        '--json',
      ]);
      expect(jsonLines(second.stdout).map((item) => item.id)).toEqual([ids[2]]);

      const byAggregate = await dlq(['list', `--aggregate=${aggregateId}`, '--json']);
      expect(jsonLines(byAggregate.stdout).map((item) => item.id)).toEqual(ids);
      const future = await dlq(['list', '--from=2999-01-01', '--json']);
      expect(future).toMatchObject({ code: 0, stdout: '' });
    });

    it('prints a readable table by default', async () => {
      const id = await newDeadLetter(ds);
      const result = await dlq(['list']);
      expect(result.code).toBe(0);
      const [header, row] = lines(result.stdout);
      expect(header).toMatch(
        /^ID\s+EVENT\s+AGGREGATE\s+REV\s+ATTEMPTS\s+DEAD-LETTERED AT\s+LAST ERROR$/,
      );
      expect(row).toMatch(
        new RegExp(
          `^${id}\\s+match\\.state_changed\\s+match/[0-9a-f-]{36}\\s+1\\s+2\\s+\\d{4}-.*Error: attempt 2 failed$`,
        ),
      );
    });

    it('reports a malformed cursor in one line and exits 1', async () => {
      const result = await dlq(['list', '--cursor=bm9wZQ']);
      expect(result.code).toBe(1);
      expect(lines(result.stderr)).toEqual([
        expect.stringMatching(/^dlq: cursor is not one this API issued/) as unknown,
      ]);
    });
  });

  it('show prints the envelope and its attempt history', async () => {
    const id = await newDeadLetter(ds, { attempts: 3 });
    const result = await dlq(['show', id, '--json']);
    expect(result.code).toBe(0);
    const [detail] = jsonLines<{ id: string; payload: unknown; history: { attempt: number }[] }>(
      result.stdout,
    );
    expect(detail).toMatchObject({
      id,
      payload: { from: null, to: 'ALLOCATING' },
      lastError: 'Error: attempt 3 failed',
    });
    expect(detail?.history.map((entry) => entry.attempt)).toEqual([1, 2, 3]);

    const table = await dlq(['show', id]);
    expect(table.stdout).toContain('delivery attempts:');
    expect(table.stdout).toContain('"to": "ALLOCATING"');
  });

  it('show of an unknown id says so and exits 1', async () => {
    const result = await dlq(['show', '424242']);
    expect(result).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'dlq: No dead letter with id 424242\n',
    });
  });

  describe('replay', () => {
    it('puts one dead letter back to pending, audits the --actor, and wakes the relay', async () => {
      const id = await newDeadLetter(ds);
      const listener = testRedis();
      const wakeUps: string[] = [];
      listener.on('message', (channel: string) => wakeUps.push(channel));
      await listener.subscribe(`${prefix}:outbox:committed`);
      try {
        const result = await dlq([
          'replay',
          id,
          '--reason=subscriber fixed',
          '--actor=carol',
          '--json',
        ]);
        expect(result).toMatchObject({ code: 0, stderr: '' });
        expect(jsonLines(result.stdout)).toEqual([
          expect.objectContaining({ id, status: 'pending' }) as unknown,
        ]);
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(wakeUps).toEqual([`${prefix}:outbox:committed`]);
      } finally {
        listener.disconnect();
      }
      const [row] = await ds.query<{ status: string; attempts: number }[]>(
        `SELECT status, attempts FROM outbox WHERE id = $1`,
        [id],
      );
      expect(row).toEqual({ status: 'pending', attempts: 0 });
      expect(
        await ds.query(`SELECT actor, reason FROM audit_log WHERE target_id = $1`, [id]),
      ).toEqual([{ actor: 'carol', reason: 'subscriber fixed' }]);
    });

    it('takes the actor from OPERATOR_NAME, and refuses to run without one (exit 2)', async () => {
      const id = await newDeadLetter(ds);
      const refused = await dlq(['replay', id, '--reason=x']);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/^dlq: replay needs --actor=NAME \(or OPERATOR_NAME\)/);
      const [still] = await ds.query<{ status: string }[]>(
        `SELECT status FROM outbox WHERE id = $1`,
        [id],
      );
      expect(still).toEqual({ status: 'dead' });

      expect((await dlq(['replay', id, '--reason=x'], { OPERATOR_NAME: 'dave' })).code).toBe(0);
      expect(await ds.query(`SELECT actor FROM audit_log WHERE target_id = $1`, [id])).toEqual([
        { actor: 'dave' },
      ]);
    });

    it('replays every dead letter of a filter, or all of them with --all', async () => {
      await newDeadLetter(ds, { event: 'ticket.state_changed' });
      await newDeadLetter(ds, { event: 'ticket.state_changed' });
      await newDeadLetter(ds, { event: 'match.state_changed' });

      const filtered = await dlq([
        'replay',
        '--event=ticket.state_changed',
        '--reason=fixed',
        '--actor=carol',
      ]);
      expect(filtered).toMatchObject({ code: 0, stdout: 'replayed 2 dead letters\n' });
      const all = await dlq(['replay', '--all', '--reason=rest', '--actor=carol', '--json']);
      expect(jsonLines(all.stdout)).toEqual([{ replayed: 1 }]);
      expect(
        await ds.query(`SELECT count(*)::int AS audited FROM audit_log WHERE actor = 'carol'`),
      ).toEqual([{ audited: 3 }]);
    });

    it('refuses a second replay of the same row and exits 1', async () => {
      const id = await newDeadLetter(ds);
      expect((await dlq(['replay', id, '--reason=x', '--actor=carol'])).code).toBe(0);
      const again = await dlq(['replay', id, '--reason=x', '--actor=carol']);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/^dlq: Outbox row \d+ is pending, not dead-lettered/);
    });
  });

  it('discard deletes the dead letter and keeps its envelope in the audit trail', async () => {
    const aggregateId = randomUUID();
    const id = await newDeadLetter(ds, { aggregateId, revision: 4 });
    const result = await dlq(['discard', id, '--reason=superseded by r5', '--actor=carol']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`discarded dead letter ${id}`);
    expect(await ds.query(`SELECT id FROM outbox WHERE id = $1`, [id])).toEqual([]);
    const [audit] = await ds.query<
      { actor: string; reason: string; details: { envelope: Record<string, unknown> } }[]
    >(`SELECT actor, reason, details FROM audit_log WHERE target_id = $1`, [id]);
    expect(audit).toMatchObject({ actor: 'carol', reason: 'superseded by r5' });
    expect(audit?.details.envelope).toMatchObject({
      event: 'match.state_changed',
      aggregateId,
      revision: 4,
      payload: { from: 'ASSIGNMENT_READY', to: 'IN_PROGRESS' },
    });
  });

  it('stats prints the backlog figures', async () => {
    await newDeadLetter(ds, { event: 'ticket.state_changed' });
    const result = await dlq(['stats', '--json']);
    expect(result.code).toBe(0);
    expect(jsonLines(result.stdout)).toEqual([
      {
        pending: { count: 0, oldestAgeSeconds: null },
        deadLetters: { count: 1, byEvent: [{ event: 'ticket.state_changed', count: 1 }] },
        blockedAggregates: { count: 0, waitingBehind: 0, top: [] },
      },
    ]);
    expect((await dlq(['stats'])).stdout).toMatch(/^pending: 0\ndead letters: 1\n/);
  });

  it('runs as `npm run dlq`', async () => {
    await newDeadLetter(ds);
    const result = await run('npm', ['run', '--silent', 'dlq', '--', 'list', '--json'], {
      ...db.env,
      REDIS_KEY_PREFIX: prefix,
    });
    expect(result.code).toBe(0);
    expect(jsonLines(result.stdout)).toHaveLength(1);
  });

  describe('usage errors exit 2 with the usage on stderr, before touching the database', () => {
    it.each([
      [[]],
      [['lsit']],
      [['list', '--evnet=x']],
      [['list', '--limit=0']],
      [['list', '--limit=abc']],
      [['list', '--aggregate=42']],
      [['list', '--from=yesterday']],
      [['list', 'extra']],
      [['show']],
      [['show', 'abc']],
      [['replay', '1']],
      [['replay', '--reason=x']],
      [['replay', '--all', '--event=x', '--reason=x']],
      [['replay', '1', '--all', '--reason=x']],
      [['discard', '1']],
      [['discard', '1', '--reason=']],
      [['stats', '--event=x']],
      [['list', '--json=yes']],
    ])('%j', async (args) => {
      // An unreachable database proves the refusal comes first.
      const result = await dlq(args, { DATABASE_PORT: String(await freePort()) });
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^dlq: .+\nusage: npm run dlq -- <command>/);
    });

    it('prints the usage on stdout and exits 0 for --help', async () => {
      const result = await dlq(['--help']);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toMatch(/^usage: npm run dlq -- <command>/);
    });
  });

  it('reports an unreachable database in one line and exits 1', async () => {
    const port = await freePort();
    const result = await dlq(['list'], { DATABASE_PORT: String(port) });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(lines(result.stderr)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^dlq: cannot connect to PostgreSQL at ${escaped(db.config.DATABASE_HOST)}:${port}/${db.name}: .*ECONNREFUSED`,
        ),
      ) as unknown,
    ]);
  });

  it('stops with one line on a malformed variable', async () => {
    const result = await dlq(['list'], { OPERATOR_NAME: 'not a name' });
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toEqual([
      expect.stringMatching(/^dlq: Invalid configuration: OPERATOR_NAME must be/) as unknown,
    ]);
  });
});
