import type { INestApplicationContext } from '@nestjs/common';
import type { QueueOptionsResponse, TicketResponse } from '@matchplane/contracts';
import type { MatcherLoop } from '../../apps/matcher/src/matcher.loop';
import { cancelQueued, startInProcessMatcher } from '../support/in-process-matcher';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import {
  measuredPlayer,
  postTicket,
  queuedPlayer,
  ticketNow,
  type QueuedTicket,
} from '../support/queue-players';

/** The skill distance widens from 5 to 50 once the anchor has waited this long. */
const SKILL_WIDENS_AFTER_MS = 6_000;

const QUEUE_MODE_ATTRIBUTES = JSON.stringify({
  duel: {
    attributes: {
      buildVersion: { type: 'string', values: ['1.4.0', '1.5.0', '1.6.0'] },
      crossplay: { type: 'string', values: ['pc', 'console'], default: 'pc' },
      skill: { type: 'number', min: 0, max: 100, integer: true, default: 50 },
    },
    rules: [
      { equal: 'buildVersion' },
      {
        distance: 'skill',
        widening: [
          { afterMs: 0, maxDistance: 5 },
          { afterMs: SKILL_WIDENS_AFTER_MS, maxDistance: 50 },
        ],
      },
    ],
  },
});

type Queued = QueuedTicket;

/** Issue 13 item 3: tickets carry attributes; the matcher keeps build versions and skills apart. */
describe('ticket attributes and rules', () => {
  let api: PlayerApi;
  let matcher: INestApplicationContext;
  let loop: MatcherLoop;
  const queued: Queued[] = [];

  beforeAll(async () => {
    api = await startPlayerApi({ QUEUE_MODE_ATTRIBUTES });
    ({ context: matcher, loop } = await startInProcessMatcher(api, { QUEUE_MODE_ATTRIBUTES }));
  });

  // Each test starts from an empty queue.
  afterEach(() => cancelQueued(api, queued));

  afterAll(async () => {
    await matcher?.close();
    await api?.close();
  });

  const measured = async () => (await measuredPlayer(api)).token;
  const enqueue = (token: string, body: unknown) => postTicket(api, token, body);

  /** A player through the real routes (session, probe, ticket) with these attributes. */
  const player = (attributes: Record<string, string | number>): Promise<Queued> =>
    queuedPlayer(api, { mode: 'duel', attributes }, queued);

  const ticketOf = (entry: Queued) => ticketNow(api, entry);

  it('stores the attributes with the ticket, defaults filled in, and lists the declarations in the options', async () => {
    const entry = await player({ buildVersion: '1.5.0', skill: 70 });
    const expected = { buildVersion: '1.5.0', crossplay: 'pc', skill: 70 };
    expect(entry.ticket.attributes).toEqual(expected);
    expect((await ticketOf(entry)).attributes).toEqual(expected);

    const options = (
      await api.request('GET', '/v1/queue/options', { token: entry.token })
    ).json<QueueOptionsResponse>();
    expect(options.modes.find((m) => m.mode === 'duel')?.attributes).toEqual([
      { name: 'buildVersion', type: 'string', values: ['1.4.0', '1.5.0', '1.6.0'], required: true },
      {
        name: 'crossplay',
        type: 'string',
        values: ['pc', 'console'],
        default: 'pc',
        required: false,
      },
      {
        name: 'skill',
        type: 'number',
        min: 0,
        max: 100,
        integer: true,
        default: 50,
        required: false,
      },
    ]);
    expect(options.modes.find((m) => m.mode === 'squad')?.attributes).toEqual([]);
  });

  it('attributes: matching build versions only', async () => {
    const old14 = await player({ buildVersion: '1.4.0' });
    const v15 = await player({ buildVersion: '1.5.0' });

    // Two players in range of each other, but of different builds: no match, and the rule is named.
    const first = await loop.passNow('duel');
    expect(first?.committed).toEqual([]);
    for (const [entry, value] of [
      [old14, '1.4.0'],
      [v15, '1.5.0'],
    ] as const) {
      const explanation = (await ticketOf(entry)).explanation;
      expect(explanation?.code).toBe('ATTRIBUTE_MISMATCH');
      expect(explanation?.message).toContain(`buildVersion must equal yours ("${value}")`);
    }

    const young14 = await player({ buildVersion: '1.4.0' });
    const second = await loop.passNow('duel');
    expect(second?.rejected).toBe(0);
    expect(second?.committed.map((match) => match.tickets.map((t) => t.id).sort())).toEqual([
      [old14.ticket.id, young14.ticket.id].sort(),
    ]);
    const matchId = second!.committed[0]!.matchId;
    const roster = await api.ds.query<{ ticket_id: string }[]>(
      `SELECT ticket_id FROM match_participants WHERE match_id = $1 ORDER BY ticket_id`,
      [matchId],
    );
    expect(roster.map((row) => row.ticket_id)).toEqual([old14.ticket.id, young14.ticket.id].sort());
    expect((await ticketOf(old14)).state).toBe('MATCHED');
    expect((await ticketOf(young14)).state).toBe('MATCHED');
    expect((await ticketOf(v15)).state).toBe('SEARCHING');
  });

  it('attributes: a widening numeric rule keeps skills 20 apart until the anchor has waited, then matches them', async () => {
    const low = await player({ buildVersion: '1.6.0', skill: 40 });
    const high = await player({ buildVersion: '1.6.0', skill: 60 });

    const first = await loop.passNow('duel');
    // The pass must run before the distance widens for the test to say anything.
    expect(first!.evaluatedAt.getTime() - new Date(low.ticket.enqueuedAt).getTime()).toBeLessThan(
      SKILL_WIDENS_AFTER_MS,
    );
    expect(first?.committed).toEqual([]);
    const explanation = (await ticketOf(low)).explanation;
    expect(explanation?.code).toBe('ATTRIBUTE_MISMATCH');
    expect(explanation?.message).toMatch(/^skill must be within 5 of yours \(40\)/);
    expect(explanation?.message).toMatch(/the search widens in \d+ s$/);

    const widensAt = new Date(low.ticket.enqueuedAt).getTime() + SKILL_WIDENS_AFTER_MS;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, widensAt - Date.now()) + 100));
    const second = await loop.passNow('duel');
    expect(second?.committed.map((match) => match.tickets.map((t) => t.id).sort())).toEqual([
      [low.ticket.id, high.ticket.id].sort(),
    ]);
  });

  describe('bad attributes are a 400 naming the attribute, and nothing is written', () => {
    it.each<[string, unknown, string, RegExp]>([
      [
        'an unknown attribute',
        { mode: 'duel', attributes: { buildVersion: '1.4.0', region: 'eu' } },
        'attributes.region',
        /unknown attribute "region"; this mode declares buildVersion, crossplay, skill/,
      ],
      [
        'an attribute in a mode that declares none',
        { mode: 'squad', attributes: { buildVersion: '1.4.0' } },
        'attributes.buildVersion',
        /unknown attribute "buildVersion": this mode declares no attributes/,
      ],
      [
        'a missing required attribute',
        { mode: 'duel' },
        'attributes.buildVersion',
        /buildVersion is required/,
      ],
      [
        'a number where a string is declared',
        { mode: 'duel', attributes: { buildVersion: 14 } },
        'attributes.buildVersion',
        /buildVersion must be a string/,
      ],
      [
        'a value not allowed',
        { mode: 'duel', attributes: { buildVersion: '0.9.0' } },
        'attributes.buildVersion',
        /buildVersion must be one of "1.4.0", "1.5.0", "1.6.0"/,
      ],
      [
        'a string where a number is declared',
        { mode: 'duel', attributes: { buildVersion: '1.4.0', skill: '50' } },
        'attributes.skill',
        /skill must be a number/,
      ],
      [
        'a number out of range',
        { mode: 'duel', attributes: { buildVersion: '1.4.0', skill: 101 } },
        'attributes.skill',
        /skill must be between 0 and 100/,
      ],
      [
        'a fraction for an integer',
        { mode: 'duel', attributes: { buildVersion: '1.4.0', skill: 50.5 } },
        'attributes.skill',
        /skill must be an integer/,
      ],
      [
        'null for an attribute',
        { mode: 'duel', attributes: { buildVersion: null } },
        'attributes.buildVersion',
        /buildVersion must be a string/,
      ],
      [
        'attributes that are not an object',
        { mode: 'duel', attributes: ['1.4.0'] },
        'attributes',
        /attributes must be an object/,
      ],
      [
        'attributes that are null',
        { mode: 'duel', attributes: null },
        'attributes',
        /attributes must be an object/,
      ],
      [
        'a NUL character in a value',
        { mode: 'duel', attributes: { buildVersion: '1.4.0\u0000' } },
        'attributes.buildVersion',
        /attributes\.buildVersion/,
      ],
      [
        'a NUL character in a name',
        { mode: 'duel', attributes: { buildVersion: '1.4.0', 'x\u0000': 1 } },
        'attributes.x\u0000',
        /attributes/,
      ],
      [
        'more attributes than any mode may declare',
        {
          mode: 'duel',
          attributes: Object.fromEntries(
            Array.from({ length: 1_000 }, (_, i) => [`made_up_${i}`, i]),
          ),
        },
        'attributes',
        /at most 16 attributes, got 1000/,
      ],
    ])('%s', async (_, body, field, detail) => {
      const token = await measured();
      const refused = await enqueue(token, body);
      expect(refused.statusCode).toBe(400);
      const problem = refused.json<{
        code: string;
        detail: string;
        errors?: { field: string; problems: string[] }[];
      }>();
      expect(problem.code).toBe('VALIDATION_FAILED');
      expect(problem.detail).toMatch(detail);
      expect(problem.errors?.map((error) => error.field)).toContain(field);
      // Nothing was written: the same player queues at once with good attributes.
      const created = await enqueue(token, { mode: 'duel', attributes: { buildVersion: '1.4.0' } });
      expect(created.statusCode).toBe(201);
      queued.push({ token, ticket: created.json<TicketResponse>() });
    });
  });
});
