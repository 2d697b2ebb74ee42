import type { MatchCandidate } from '@matchplane/domain';
import {
  attributeSchemasOf,
  modeRulesOf,
  type ActiveRuleSet,
  type ActiveRules,
} from '@matchplane/rule-sets';
import type { RuleMisfitTickets } from '@matchplane/tickets';
import { RuleSetRecheck } from './rule-set-recheck';

const platforms = (values: string[]) =>
  JSON.stringify({ duel: { attributes: { platform: { type: 'string', values } } } });

function versionOf(version: number, values: string[]): ActiveRules {
  const variables = { QUEUE_MODES: 'duel:1x2', QUEUE_MODE_ATTRIBUTES: platforms(values) };
  return {
    version,
    variables,
    modes: [],
    rulesByMode: new Map(
      modeRulesOf({ ...variables, MATCH_WIDENING: '0:50:100' }).map((r) => [r.mode, r]),
    ),
    attributes: attributeSchemasOf(variables),
  };
}

function candidate(n: number, platform: string): MatchCandidate {
  return {
    ticketId: `00000000-0000-4000-8000-00000000000${n}`,
    playerId: `00000000-0000-4000-9000-00000000000${n}`,
    mode: 'duel',
    rating: 1500,
    predictedRtt: { 'eu-west': 20 },
    enqueuedAt: new Date('2026-12-07T10:00:00Z'),
    attributes: { platform },
  };
}

describe(RuleSetRecheck.name, () => {
  const ended: string[][] = [];
  const tickets = {
    end: (ids: readonly string[]) => {
      ended.push([...ids]);
      return Promise.resolve([]);
    },
  } as unknown as RuleMisfitTickets;
  const now = new Date('2026-12-07T10:01:00Z');
  let stored: ActiveRules;
  const ruleSet = { refresh: () => Promise.resolve(stored) } as unknown as ActiveRuleSet;

  it('passes on the tickets the active version takes and ends the others, at every pass until they leave the pool', async () => {
    const recheck = new RuleSetRecheck(tickets, ruleSet);
    const pool = [candidate(1, 'pc'), candidate(2, 'mobile')];
    const both = versionOf(2, ['pc', 'mobile']);
    expect(await recheck.keepFitting('duel/all', both, 'duel', pool, now)).toEqual(pool);
    expect(ended).toEqual([]);

    const pcOnly = versionOf(3, ['pc']);
    stored = pcOnly;
    const kept = await recheck.keepFitting('duel/all', pcOnly, 'duel', pool, now);
    expect(kept.map((c) => c.ticketId)).toEqual([pool[0]!.ticketId]);
    expect(ended).toEqual([[pool[1]!.ticketId]]);

    // A ticket another writer held is found again at the next pass and ended then.
    await recheck.keepFitting('duel/all', pcOnly, 'duel', pool, now);
    expect(ended).toEqual([[pool[1]!.ticketId], [pool[1]!.ticketId]]);
  });

  it('passes on a ticket the version reads as it is without copying it, and copies one it fills', () => {
    const recheck = new RuleSetRecheck(tickets, ruleSet);
    const asItIs = candidate(1, 'pc');
    const filled = { ...candidate(2, 'pc'), attributes: {} };
    const withDefault = versionOf(4, ['pc']);
    const schema = withDefault.attributes.get('duel');
    const platform = schema?.attributes[0];
    if (!schema || !platform) throw new Error('the duel schema declares platform');
    const defaulted = { ...schema, attributes: [{ ...platform, default: 'pc' }] };
    const active = { ...withDefault, attributes: new Map([['duel', defaulted]]) } as ActiveRules;
    const { fitting } = recheck.sort('duel/all', active, 'duel', [asItIs, filled]);
    expect(fitting[0]).toBe(asItIs);
    expect(fitting[1]).not.toBe(filled);
    expect(fitting[1]?.attributes).toEqual({ platform: 'pc' });
  });

  it('ends nothing under a version the table no longer holds active, nor before it was read', async () => {
    ended.splice(0);
    const recheck = new RuleSetRecheck(tickets, ruleSet);
    const pool = [candidate(1, 'pc'), candidate(2, 'mobile')];
    // The API took version 4 (mobile again) before this matcher's poll: the mobile ticket stays.
    stored = versionOf(4, ['pc', 'mobile']);
    const kept = await recheck.keepFitting('duel/all', versionOf(3, ['pc']), 'duel', pool, now);
    expect(kept.map((c) => c.ticketId)).toEqual([pool[0]!.ticketId]);
    const { version: _unread, ...environment } = versionOf(3, ['pc']);
    expect(await recheck.keepFitting('duel/all', environment, 'duel', pool, now)).toEqual(pool);
    expect(ended).toEqual([]);
  });
});
