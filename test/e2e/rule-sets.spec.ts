import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MatchplaneApiError, PlayerClient } from '@matchplane/sdk';
import type { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../support/database';
import {
  runCli,
  startQuickApi,
  startQuickMatcher,
  waitFor,
  type RunningApp,
} from '../support/processes';
import { deleteRedisPrefix, testRedisPrefix } from '../support/redis';

/*
 * Rule sets as versioned data, on the API and matcher processes from dist/: the environment is
 * version 1; a version created, checked, activated and rolled back through the operator routes
 * (and the CLI) changes what the API accepts and what the running matcher forms, without a
 * restart, and each match records the version that formed it.
 */

const OPERATOR_TOKEN = 'ops-token-0123456789abcdefghijklmnop';

/** duel players on different platforms never meet under the environment's rules. */
const platforms = (values: string[], rules: object[]) => ({
  duel: { attributes: { platform: { type: 'string', values } }, rules },
});
const ENVIRONMENT_ATTRIBUTES = platforms(['pc', 'console'], [{ equal: 'platform' }]);
/** Version 2: cross-play (no equal rule) and a third platform. */
const CROSS_PLAY = { QUEUE_MODE_ATTRIBUTES: platforms(['pc', 'console', 'mobile'], []) };

describe('rule sets change the running API and matcher without a restart', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const prefix = testRedisPrefix();
  const running: RunningApp[] = [];
  let baseUrl: string;
  let matcherUrl: string;
  let env: Record<string, string>;
  const scratch = mkdtempSync(path.join(tmpdir(), 'rule-sets-'));

  beforeAll(async () => {
    db = await createTestDatabase();
    ds = await db.dataSource();
    env = {
      ...db.env,
      REDIS_KEY_PREFIX: prefix,
      DATABASE_POOL_SIZE: '4',
      QUEUE_MODE_ATTRIBUTES: JSON.stringify(ENVIRONMENT_ATTRIBUTES),
      RULE_SET_POLL_INTERVAL_MS: '200',
    };
    baseUrl = await startQuickApi(env, running, { OPERATOR_TOKENS: `alice=${OPERATOR_TOKEN}` });
    matcherUrl = await startQuickMatcher(env, running);
  });

  afterAll(async () => {
    await Promise.all(running.map((app) => app.stop()));
    await db.drop();
    await deleteRedisPrefix(prefix);
    rmSync(scratch, { recursive: true, force: true });
  });

  function admin(method: 'GET' | 'POST', route: string, body?: object) {
    return fetch(`${baseUrl}/v1/admin/${route}`, {
      method,
      headers: {
        authorization: `Bearer ${OPERATOR_TOKEN}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  }

  async function queued(platform: string) {
    const client = new PlayerClient({ baseUrl });
    await client.createSession();
    await client.probe('eu-west', { samples: 1 });
    const ticket = await client.enqueue('duel', { attributes: { platform } });
    return { client, ticket };
  }

  async function matcherRunsVersion(): Promise<number | undefined> {
    const text = await fetch(`${matcherUrl}/metrics`).then((r) => r.text());
    const found = /^rule_set_version_running\{[^}]*\} (\d+)$/m.exec(text);
    return found ? Number(found[1]) : undefined;
  }

  async function enqueueStatus(platform: string): Promise<number> {
    return queued(platform).then(
      async ({ client, ticket }) => {
        await client.cancel(ticket.id);
        return 201;
      },
      (error: unknown) => (error instanceof MatchplaneApiError ? error.status : 0),
    );
  }

  it('starts on version 1, the environment, active', async () => {
    const response = await admin('GET', 'rule-sets');
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      activeVersion: 1,
      ruleSets: [{ version: 1, status: 'active', rules: {}, createdBy: 'environment' }],
    });
  });

  it('a dry run reports every problem, naming its variable, and stores nothing; a create with them is 400', async () => {
    const bad = {
      MATCH_WIDENING: '0:50:100,5000:40:100',
      QUEUE_MODES: 'duel:1x2',
    };
    const dry = await admin('POST', 'rule-sets?dryRun=true', { reason: 'try', rules: bad });
    expect(dry.status).toBe(200);
    const check = (await dry.json()) as { valid: boolean; problems: { field: string }[] };
    expect(check.valid).toBe(false);
    expect(check.problems.map((p) => p.field)).toEqual(['MATCH_WIDENING', 'QUEUE_MODES']);

    const refused = await admin('POST', 'rule-sets', { reason: 'try', rules: bad });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(await refused.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: [{ field: 'rules.MATCH_WIDENING' }, { field: 'rules.QUEUE_MODES' }],
    });
    const unknown = await admin('POST', 'rule-sets', { reason: 'try', rules: { FOO: '1' } });
    expect(await unknown.json()).toMatchObject({ errors: [{ field: 'rules.FOO' }] });
    const stored = await ds.query<{ count: string }[]>(`SELECT count(*) FROM rule_sets`);
    expect(stored).toEqual([{ count: '1' }]);
  });

  it('activating a version changes what the API accepts and what the matcher forms; rollback undoes it', async () => {
    // Under the environment's rules: mobile is refused, pc and console wait apart.
    expect(await enqueueStatus('mobile')).toBe(400);
    const pc = await queued('pc');
    const console_ = await queued('console');
    for (const { client, ticket } of [pc, console_]) {
      const waiting = await client.waitForTicket(ticket.id, (t) => t.explanation !== undefined, {
        timeoutMs: 15_000,
        pollMs: 100,
      });
      expect(waiting.state).toBe('SEARCHING');
    }

    const dry = await admin('POST', 'rule-sets?dryRun=true', { reason: 'try', rules: CROSS_PLAY });
    expect(await dry.json()).toMatchObject({ dryRun: true, valid: true, problems: [] });
    const created = await admin('POST', 'rule-sets', { reason: 'cross-play', rules: CROSS_PLAY });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ version: 2, status: 'draft', createdBy: 'alice' });
    // A draft changes nothing: they still wait.
    expect((await pc.client.ticket(pc.ticket.id)).state).toBe('SEARCHING');

    const activated = await admin('POST', 'rule-sets/2/activate', { reason: 'launch cross-play' });
    expect(activated.status).toBe(200);
    expect(await activated.json()).toMatchObject({ version: 2, status: 'active' });

    // The running matcher picks version 2 up and matches them, recording the version.
    const [a, b] = await Promise.all(
      [pc, console_].map(({ client, ticket }) =>
        client.waitForTicket(ticket.id, (t) => t.state === 'MATCHED', {
          timeoutMs: 15_000,
          pollMs: 100,
        }),
      ),
    );
    expect(a?.matchId).toBeDefined();
    expect(b?.matchId).toBe(a?.matchId);
    const [match] = await ds.query<{ rule_set_version: number }[]>(
      `SELECT rule_set_version FROM matches WHERE id = $1`,
      [a?.matchId],
    );
    expect(match).toEqual({ rule_set_version: 2 });
    // The matcher says which version it runs, for an operator watching a rollout.
    await waitFor(async () => ((await matcherRunsVersion()) === 2 ? true : undefined), {
      what: 'the matcher to report rule_set_version_running 2',
    });
    // The running API takes the new platform.
    await waitFor(async () => ((await enqueueStatus('mobile')) === 201 ? true : undefined), {
      what: 'the API to accept mobile under version 2',
    });
    // A mobile player queues under version 2 and waits (nobody else is there)...
    const mobile = await queued('mobile');
    const beats = mobile.client.startHeartbeats(mobile.ticket.id);

    const rolledBack = await admin('POST', 'rule-sets/rollback', { reason: 'too many complaints' });
    expect(rolledBack.status).toBe(200);
    expect(await rolledBack.json()).toMatchObject({ version: 1, status: 'active' });
    await waitFor(async () => ((await enqueueStatus('mobile')) === 400 ? true : undefined), {
      what: 'the API to refuse mobile again under version 1',
    });
    // ... and is told at once that version 1 no longer takes its ticket, rather than waiting for
    // a match the rules no longer allow (decisions/2026-12-07-queued-tickets-under-a-new-rule-set.md).
    const left = await mobile.client.waitForTicket(
      mobile.ticket.id,
      (t) => t.state !== 'SEARCHING',
      { timeoutMs: 30_000, pollMs: 100 },
    );
    beats.stop();
    expect(left).toMatchObject({ state: 'CANCELLED', endReason: 'RULES_CHANGED' });
    await waitFor(async () => ((await matcherRunsVersion()) === 1 ? true : undefined), {
      what: 'the matcher to report rule_set_version_running 1 after the rollback',
    });

    const audit = await ds.query<{ actor: string; action: string; target_id: string }[]>(
      `SELECT actor, action, target_id FROM audit_log WHERE target_type = 'rule_set' ORDER BY id`,
    );
    expect(audit).toEqual([
      { actor: 'alice', action: 'rule_set.created', target_id: '2' },
      { actor: 'alice', action: 'rule_set.activated', target_id: '2' },
      { actor: 'alice', action: 'rule_set.rolled_back', target_id: '1' },
    ]);
  });

  it('answers 404 for an unknown version and 400 for one that is no number', async () => {
    const unknown = await admin('POST', 'rule-sets/99/activate', { reason: 'x' });
    expect(unknown.status).toBe(404);
    const malformed = await admin('POST', 'rule-sets/two/activate', { reason: 'x' });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ errors: [{ field: 'version' }] });
  });

  it('the CLI checks, creates, activates and lists versions, audited under its actor', async () => {
    const file = path.join(scratch, 'wide.json');
    writeFileSync(file, JSON.stringify({ MATCH_WIDENING: '0:400:100,5000:40:100' }));
    const cli = (...args: string[]) =>
      runCli('dist/apps/api/src/cli/rule-sets.main.js', env, [...args, '--actor=bob']);
    const check = await cli('check', file);
    expect(check.code).toBe(1);
    expect(check.output).toContain('MATCH_WIDENING step[1].maxRttMs must not narrow');

    writeFileSync(file, JSON.stringify(CROSS_PLAY));
    expect((await cli('create', file, '--reason=cli')).output).toMatch(/^version 3 draft/);
    expect((await cli('activate', '3', '--reason=cli')).output).toMatch(/^version 3 active/);
    await waitFor(async () => ((await enqueueStatus('mobile')) === 201 ? true : undefined), {
      what: 'the API to accept mobile under version 3',
    });
    const listed = await cli('list', '--json');
    const versions = listed.output
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { version: number; status: string });
    expect(versions.map(({ version, status }) => [version, status])).toEqual([
      [3, 'active'],
      [2, 'retired'],
      [1, 'retired'],
    ]);
    const [audited] = await ds.query<{ actor: string }[]>(
      `SELECT actor FROM audit_log WHERE action = 'rule_set.activated' AND target_id = '3'`,
    );
    expect(audited).toEqual({ actor: 'bob' });
  });

  it('the console checks a draft, activates a version and rolls back, audited under the operator', async () => {
    const login = await fetch(`${baseUrl}/admin/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: OPERATOR_TOKEN }),
      redirect: 'manual',
    });
    expect(login.status).toBe(303);
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const listed = await fetch(`${baseUrl}/admin/rule-sets`, { headers: { cookie } });
    expect(listed.status).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await listed.text())?.[1] ?? '';
    const form = (route: string, fields: Record<string, string>) =>
      fetch(`${baseUrl}/admin/${route}`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...fields, _csrf: csrf }),
        redirect: 'manual',
      });

    const checked = await form('rule-sets', {
      action: 'check',
      reason: 'try',
      rules: JSON.stringify({ MATCH_WIDENING: '0:50:100,5000:40:100' }),
    });
    expect(checked.status).toBe(200);
    expect(await checked.text()).toContain('MATCH_WIDENING step[1].maxRttMs must not narrow');

    const activated = await form('rule-sets/2/activate', { reason: 'from the console' });
    expect(activated.status).toBe(303);
    const active = () =>
      ds.query<{ version: number }[]>(`SELECT version FROM rule_sets WHERE status = 'active'`);
    expect(await active()).toEqual([{ version: 2 }]);
    expect((await form('rule-sets/rollback', { reason: 'back' })).status).toBe(303);
    expect(await active()).toEqual([{ version: 3 }]);
    const audit = await ds.query<{ actor: string; action: string; reason: string }[]>(
      `SELECT actor, action, reason FROM audit_log WHERE reason IN ('from the console', 'back') ORDER BY id`,
    );
    expect(audit).toEqual([
      { actor: 'alice', action: 'rule_set.activated', reason: 'from the console' },
      { actor: 'alice', action: 'rule_set.rolled_back', reason: 'back' },
    ]);
  });

  it('the simulator replays under the active version, says which, and prints the same figures for the same seed', async () => {
    const capture = path.join(scratch, 'capture.jsonl');
    const simulate = async () => {
      const run = await runCli('dist/apps/matcher/src/simulate.main.js', env, [
        '--players=300',
        '--seconds=120',
        '--drain-seconds=30',
        `--write-capture=${capture}`,
      ]);
      expect(run.code).toBe(0);
      const last = run.output.split('\n').find((line) => line.startsWith('{"simulator"')) ?? '{}';
      const { wall_s: _wall, ...result } = JSON.parse(last) as Record<string, unknown>;
      return result;
    };
    const first = await simulate();
    // Version 3 (cross-play, and a mobile platform the environment does not declare) is active.
    expect(first).toMatchObject({ active_rule_set_version: 3, arrivals: 300 });
    const platforms = readFileSync(capture, 'utf8')
      .trim()
      .split('\n')
      .map(
        (line) => (JSON.parse(line) as { attributes: { platform?: string } }).attributes.platform,
      );
    expect(platforms).toContain('mobile');
    expect(await simulate()).toEqual(first);
  });
});
