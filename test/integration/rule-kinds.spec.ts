import type { INestApplicationContext } from '@nestjs/common';
import type {
  QueueOptionsResponse,
  TicketAttributeValue,
  TicketResponse,
} from '@matchplane/contracts';
import type { MatcherLoop } from '../../apps/matcher/src/matcher.loop';
import { cancelQueued, startInProcessMatcher } from '../support/in-process-matcher';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import {
  committedTickets,
  measuredPlayer,
  postTicket,
  queuedPlayer,
  ticketNow,
  type QueuedTicket,
} from '../support/queue-players';

/** The build rule stops applying once a match's anchor has waited this long. */
const BUILD_OPTIONAL_AFTER_S = 4;

const QUEUE_MODE_ATTRIBUTES = JSON.stringify({
  duel: {
    attributes: {
      platforms: { type: 'set', values: ['pc', 'ps', 'xbox'], default: ['pc'] },
      build: { type: 'string', values: ['1.4', '1.5'], default: '1.5' },
    },
    rules: [
      { intersect: 'platforms' },
      { equal: 'build', optionalAfterSeconds: BUILD_OPTIONAL_AFTER_S },
    ],
  },
});

type Queued = QueuedTicket;

/**
 * Issue 34 item 2 through the real routes and the matcher's real module graph: a set attribute
 * (cross-play pools) validated at enqueue and matched by intersection, and an equal rule that
 * becomes optional after a wait, explained to the waiting player.
 */
describe('rule kinds: set intersection and rules optional after a wait', () => {
  let api: PlayerApi;
  let matcher: INestApplicationContext;
  let loop: MatcherLoop;
  const queued: Queued[] = [];

  beforeAll(async () => {
    api = await startPlayerApi({ QUEUE_MODE_ATTRIBUTES });
    ({ context: matcher, loop } = await startInProcessMatcher(api, { QUEUE_MODE_ATTRIBUTES }));
  });

  afterEach(() => cancelQueued(api, queued));

  afterAll(async () => {
    await matcher?.close();
    await api?.close();
  });

  const enqueue = (token: string, body: unknown) => postTicket(api, token, body);
  const ticketOf = (queued: Queued) => ticketNow(api, queued);

  const player = (attributes: Record<string, TicketAttributeValue>) =>
    queuedPlayer(api, { mode: 'duel', attributes }, queued);

  it('stores a set in declared order, fills its default, and lists the declaration in the options', async () => {
    const entry = await player({ platforms: ['xbox', 'pc'] });
    expect(entry.ticket.attributes).toEqual({ platforms: ['pc', 'xbox'], build: '1.5' });
    expect((await ticketOf(entry)).attributes).toEqual({ platforms: ['pc', 'xbox'], build: '1.5' });
    const defaults = await player({});
    expect(defaults.ticket.attributes).toEqual({ platforms: ['pc'], build: '1.5' });

    const options = (
      await api.request('GET', '/v1/queue/options', { token: entry.token })
    ).json<QueueOptionsResponse>();
    expect(options.modes.find((m) => m.mode === 'duel')?.attributes).toContainEqual({
      name: 'platforms',
      type: 'set',
      values: ['pc', 'ps', 'xbox'],
      default: ['pc'],
      required: false,
    });
  });

  it.each<[string, unknown, RegExp]>([
    [
      'a value not allowed',
      ['pc', 'switch'],
      /platforms lists "switch"; its values must be among "pc", "ps", "xbox"/,
    ],
    ['an empty set', [], /platforms must list at least one value/],
    ['a value twice', ['ps', 'ps'], /platforms lists "ps" twice/],
    ['a string for a set', 'pc', /platforms must be a list of values/],
  ])(
    'refuses %s with a 400 naming the attribute, writing nothing',
    async (_, platforms, detail) => {
      const { token } = await measuredPlayer(api);
      const refused = await enqueue(token, { mode: 'duel', attributes: { platforms } });
      expect(refused.statusCode).toBe(400);
      const problem = refused.json<{
        code: string;
        detail: string;
        errors?: { field: string }[];
      }>();
      expect(problem.code).toBe('VALIDATION_FAILED');
      expect(problem.detail).toMatch(detail);
      expect(problem.errors?.map((error) => error.field)).toEqual(['attributes.platforms']);
      const created = await enqueue(token, { mode: 'duel', attributes: { platforms: ['ps'] } });
      expect(created.statusCode).toBe(201);
      queued.push({ token, ticket: created.json<TicketResponse>() });
    },
  );

  it('matches only players whose platform sets intersect, explaining the rule to those kept apart', async () => {
    const pcOnly = await player({ platforms: ['pc'] });
    const psOnly = await player({ platforms: ['ps'] });

    const first = await loop.passNow('duel');
    expect(first?.committed).toEqual([]);
    const explanation = (await ticketOf(pcOnly)).explanation;
    expect(explanation?.code).toBe('ATTRIBUTE_MISMATCH');
    expect(explanation?.message).toMatch(/^platforms must share a value with yours \("pc"\)/);

    const both = await player({ platforms: ['ps', 'xbox'] });
    const second = await loop.passNow('duel');
    expect(committedTickets(second)).toEqual([[psOnly.ticket.id, both.ticket.id].sort()]);
    expect((await ticketOf(pcOnly)).state).toBe('SEARCHING');
  });

  it('keeps builds apart until the anchor has waited optionalAfterSeconds, saying when, then matches them', async () => {
    const old = await player({ build: '1.4' });
    const current = await player({ build: '1.5' });

    const first = await loop.passNow('duel');
    const optionalAt = new Date(old.ticket.enqueuedAt).getTime() + BUILD_OPTIONAL_AFTER_S * 1000;
    // The pass must run before the rule relaxes for the test to say anything.
    expect(first!.evaluatedAt.getTime()).toBeLessThan(optionalAt);
    expect(first?.committed).toEqual([]);
    const explanation = (await ticketOf(old)).explanation;
    expect(explanation?.code).toBe('ATTRIBUTE_MISMATCH');
    expect(explanation?.message).toMatch(
      /^build must equal yours \("1\.4"\).*; the build rule no longer applies in \d+ s$/,
    );

    await new Promise((resolve) => setTimeout(resolve, Math.max(0, optionalAt - Date.now()) + 100));
    const second = await loop.passNow('duel');
    expect(committedTickets(second)).toEqual([[old.ticket.id, current.ticket.id].sort()]);
  });
});
