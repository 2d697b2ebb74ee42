import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { formMatches, type MatchingFunction } from '@matchplane/domain';
import { simulateOptions } from '../simulate.main';
import { replay, type ModeOutcome } from './replay';
import { ruleSetFromEnvironment, ruleSetFromFile } from './rule-sets';
import { captureLine, parseCapture, syntheticTraffic, type Arrival } from './traffic';

const ENV = {
  QUEUE_MODES: 'duel:1x2,squad:4x2',
  MATCH_WIDENING: '0:50:100,10000:100:200,30000:200:400',
};
const OPTIONS = {
  passIntervalMs: 500,
  drainMs: 120_000,
  startAt: new Date('2026-01-01T00:00:00Z'),
};

/** The matcher's function with one list of every candidate dropped, to compare against. */
function ignoring(list: 'blockedPlayerIds' | 'avoidedPlayerIds'): MatchingFunction {
  return (candidates, modeRules, now) =>
    formMatches(
      candidates.map(({ [list]: _ignored, ...candidate }) => candidate),
      modeRules,
      now,
    );
}

function traffic(seed = 7, players = 600): Arrival[] {
  const active = ruleSetFromEnvironment(ENV);
  return syntheticTraffic({
    players,
    seconds: 300,
    seed,
    rules: active.rules,
    attributes: active.attributes,
  });
}

describe('the queue simulator', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'mp-simulate-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('gives the same figures for the same traffic and seed, and other figures for another seed', () => {
    const { rules } = ruleSetFromEnvironment(ENV);
    const first = replay(traffic(), rules, formMatches, OPTIONS);
    expect(JSON.stringify(replay(traffic(), rules, formMatches, OPTIONS))).toBe(
      JSON.stringify(first),
    );
    expect(JSON.stringify(replay(traffic(8), rules, formMatches, OPTIONS))).not.toBe(
      JSON.stringify(first),
    );
    expect(first.duel!.players + first.squad!.players).toBe(600);
    expect(first.duel!.matched_players).toBeGreaterThan(0);
    // Every player is accounted for once: matched, cancelled or still waiting.
    for (const outcome of Object.values(first)) {
      expect(outcome.matched_players + outcome.cancelled_players + outcome.waiting_players).toBe(
        outcome.players,
      );
    }
  });

  it('replays mode shapes byte for byte: unequal teams, a battle royale that starts short, roles', () => {
    const env = {
      ...ENV,
      QUEUE_MODES: 'hunt:4+1,br:1x12@10000:8@20000:4,arena:2x2',
      QUEUE_MODE_ATTRIBUTES: JSON.stringify({
        arena: {
          attributes: { roles: { type: 'set', values: ['healer', 'dps'] } },
          rules: [{ roles: 'roles', perTeam: { healer: 1 } }],
        },
      }),
    };
    const { rules, attributes } = ruleSetFromEnvironment(env);
    const arrivals = () =>
      syntheticTraffic({ players: 400, seconds: 300, seed: 3, rules, attributes });
    const sizes: number[] = [];
    const healers = new Set(
      arrivals()
        .filter(
          (a) => Array.isArray(a.attributes?.['roles']) && a.attributes['roles'].includes('healer'),
        )
        .map((a) => a.ticketId),
    );
    let teamsWithoutHealer = 0;
    const counting: MatchingFunction = (candidates, modeRules, now) => {
      const formed = formMatches(candidates, modeRules, now);
      for (const m of formed.matches) {
        if (m.mode === 'br') sizes.push(m.participants.length);
        if (m.mode !== 'arena') continue;
        for (const team of [0, 1]) {
          const members = m.participants.filter((p) => p.team === team);
          if (!members.some((p) => healers.has(p.ticketId))) teamsWithoutHealer += 1;
        }
      }
      return formed;
    };
    const first = replay(arrivals(), rules, counting, OPTIONS);
    expect(JSON.stringify(replay(arrivals(), rules, formMatches, OPTIONS))).toBe(
      JSON.stringify(first),
    );
    expect(first.hunt!.matched_players % 5).toBe(0);
    expect(first.hunt!.matches).toBeGreaterThan(0);
    // Sparse traffic: battle royales start short, never under the last step's minimum.
    expect(sizes.some((size) => size < 12)).toBe(true);
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(4);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(12);
    expect(first.arena!.matches).toBeGreaterThan(0);
    expect(teamsWithoutHealer).toBe(0);
  });

  it('replays through the matching function it is given, at virtual times one pass interval apart', () => {
    const { rules } = ruleSetFromEnvironment(ENV);
    const seen: number[] = [];
    const spy: MatchingFunction = (candidates, modeRules, now) => {
      seen.push(now.getTime() - OPTIONS.startAt.getTime());
      return formMatches(candidates, modeRules, now);
    };
    replay(traffic(), rules, spy, OPTIONS);
    expect(seen.length).toBeGreaterThan(10);
    expect(seen.every((ms) => ms % OPTIONS.passIntervalMs === 0)).toBe(true);
  });

  it('shows a proposed rule set’s effect: wider limits match duels sooner', () => {
    const file = path.join(dir, 'proposed.json');
    writeFileSync(file, JSON.stringify({ MATCH_WIDENING: '0:200:800' }));
    const arrivals = traffic(11, 1_000);
    const active = replay(arrivals, ruleSetFromEnvironment(ENV).rules, formMatches, OPTIONS);
    const proposed = replay(arrivals, ruleSetFromFile(file, ENV).rules, formMatches, OPTIONS);
    expect(proposed.duel!.wait_ms.p50).toBeLessThan(active.duel!.wait_ms.p50);
    expect(proposed.duel!.mean_team_rating_gap).toBeGreaterThan(active.duel!.mean_team_rating_gap);
  });

  it('counts blocked pairs matched: none under the matcher’s function, some when blocks are ignored', () => {
    const { rules } = ruleSetFromEnvironment(ENV);
    const arrivals = traffic(13, 1_000);
    const blocking = arrivals.filter((arrival) => arrival.blockedPlayerIds);
    // About 5 % of players blocked someone who queued just before them.
    expect(blocking.length).toBeGreaterThan(20);
    const honoured = replay(arrivals, rules, formMatches, OPTIONS);
    expect(honoured.duel!.blocked_pairs_matched + honoured.squad!.blocked_pairs_matched).toBe(0);
    const ignored = replay(arrivals, rules, ignoring('blockedPlayerIds'), OPTIONS);
    expect(
      ignored.duel!.blocked_pairs_matched + ignored.squad!.blocked_pairs_matched,
    ).toBeGreaterThan(0);
  });

  it('counts avoided pairs matched: fewer under the matcher’s function than when avoids are ignored', () => {
    const { rules } = ruleSetFromEnvironment(ENV);
    // Half the players avoid someone who queued shortly before them (5 % by default: too few pairs
    // that would meet at all for the difference to show), drawn apart from the blocks.
    const arrivals = syntheticTraffic({
      players: 1_000,
      seconds: 300,
      seed: 13,
      rules,
      attributes: ruleSetFromEnvironment(ENV).attributes,
      avoidShare: 0.5,
    });
    expect(arrivals.filter((arrival) => arrival.avoidedPlayerIds).length).toBeGreaterThan(400);
    const pairs = (outcome: Record<string, ModeOutcome>) =>
      outcome.duel!.avoided_pairs_matched + outcome.squad!.avoided_pairs_matched;
    const honoured = replay(arrivals, rules, formMatches, OPTIONS);
    const ignored = replay(arrivals, rules, ignoring('avoidedPlayerIds'), OPTIONS);
    expect(pairs(ignored)).toBeGreaterThan(pairs(honoured));
    expect(honoured.duel!.blocked_pairs_matched + honoured.squad!.blocked_pairs_matched).toBe(0);
  });

  it('lets impatient players cancel, a party as one', () => {
    const { rules, attributes } = ruleSetFromEnvironment({ ...ENV, QUEUE_MODES: 'squad:4x2' });
    const arrivals = syntheticTraffic({
      players: 200,
      seconds: 600,
      seed: 3,
      rules,
      attributes,
      partyShare: 0.5,
      meanPatienceSeconds: 5,
    });
    const outcome = replay(arrivals, rules, formMatches, OPTIONS).squad!;
    expect(outcome.cancelled_players).toBeGreaterThan(0);
    const parties = new Map<string, number>();
    for (const arrival of arrivals) {
      if (arrival.party) parties.set(arrival.party.id, arrival.cancelAfterMs!);
    }
    expect(parties.size).toBeGreaterThan(0);
    for (const arrival of arrivals.filter((a) => a.party)) {
      expect(arrival.cancelAfterMs).toBe(parties.get(arrival.party!.id));
    }
  });

  it('takes a whole party out of the pool when one member cancels, as the API ends a party’s tickets together', () => {
    const { rules } = ruleSetFromEnvironment({ ...ENV, QUEUE_MODES: 'squad:4x2' });
    const member = (ticketId: string, cancelAfterMs?: number): Arrival => ({
      atMs: 0,
      ticketId,
      playerId: `player-${ticketId}`,
      mode: 'squad',
      rating: 1500,
      rtt: { 'eu-west': 20 },
      attributes: {},
      party: { id: 'party-1', size: 2 },
      ...(cancelAfterMs === undefined ? {} : { cancelAfterMs }),
    });
    // One member of the pair gives up after a second; the other would wait for ever.
    const outcome = replay([member('a', 1_000), member('b')], rules, formMatches, {
      ...OPTIONS,
      drainMs: 5_000,
    }).squad!;
    expect(outcome).toMatchObject({ players: 2, cancelled_players: 2, waiting_players: 0 });
  });

  it('counts arrivals of a mode the rule set does not know as still waiting', () => {
    const arrivals = traffic();
    const { rules } = ruleSetFromEnvironment({ ...ENV, QUEUE_MODES: 'duel:1x2' });
    const outcome = replay(arrivals, rules, formMatches, OPTIONS);
    expect(outcome.squad!.waiting_players).toBe(outcome.squad!.players);
    expect(outcome.squad!.matched_players).toBe(0);
  });

  it('writes and reads captures, and names the line and field of a malformed arrival', () => {
    const arrivals = traffic();
    const text = arrivals.map(captureLine).join('\n');
    // Times are read relative to the earliest arrival.
    const start = arrivals[0]!.atMs;
    expect(parseCapture(text)).toEqual(arrivals.map((a) => ({ ...a, atMs: a.atMs - start })));
    expect(() => parseCapture(`${captureLine(arrivals[0]!)}\n{"enqueuedAt": "yesterday"}`)).toThrow(
      'capture line 2: enqueuedAt must be an ISO 8601 instant',
    );
    expect(() => parseCapture('not json')).toThrow('capture line 1 is not JSON');
  });

  it('replays the avoids of a capture (the operator export writes them): the avoided pair meets only when nothing else fits', () => {
    const { rules } = ruleSetFromEnvironment(ENV);
    // Ids as the matcher takes them: canonical UUIDs (player "a" is ...2a, its ticket ...1a).
    const uuidOf = (suffix: string) => `00000000-0000-4000-8000-0000000000${suffix}`;
    const line = (name: string, atS: number, rating: number, avoids?: string[]) =>
      JSON.stringify({
        ticketId: uuidOf(`1${name}`),
        playerId: uuidOf(`2${name}`),
        mode: 'duel',
        rating,
        rtt: { 'eu-west': 20 },
        enqueuedAt: new Date(Date.UTC(2026, 11, 7, 10, 0, atS)).toISOString(),
        ...(avoids ? { avoidedPlayerIds: avoids.map((other) => uuidOf(`2${other}`)) } : {}),
      });
    const replayed = (lines: string[]) =>
      replay(parseCapture(lines.join('\n')), rules, formMatches, { ...OPTIONS, drainMs: 5_000 })
        .duel!;
    // b is a's closest rating, c is there too: a and c meet, b waits.
    expect(
      replayed([line('a', 0, 1500, ['b']), line('b', 0, 1510), line('c', 0, 1550)]),
    ).toMatchObject({
      matched_players: 2,
      waiting_players: 1,
      avoided_pairs_matched: 0,
    });
    // Alone together, a and b meet all the same, and the figures say so.
    expect(replayed([line('a', 0, 1500, ['b']), line('b', 1, 1510)])).toMatchObject({
      matched_players: 2,
      avoided_pairs_matched: 1,
    });
    expect(() =>
      parseCapture(line('a', 0, 1500).replace(/}$/, ',"avoidedPlayerIds":[""]}')),
    ).toThrow('capture line 1: avoidedPlayerIds must be a list of player ids');
  });

  it('refuses a proposed rule set the matcher would refuse, naming the problem', () => {
    const unknown = path.join(dir, 'unknown.json');
    writeFileSync(unknown, JSON.stringify({ MATCHER_PASS_INTERVAL_MS: '10' }));
    expect(() => ruleSetFromFile(unknown, ENV)).toThrow(
      'MATCHER_PASS_INTERVAL_MS is not a rule variable',
    );
    const narrowing = path.join(dir, 'narrowing.json');
    writeFileSync(narrowing, JSON.stringify({ MATCH_WIDENING: '0:100:100,1000:50:100' }));
    expect(() => ruleSetFromFile(narrowing, ENV)).toThrow(/MATCH_WIDENING/);
  });

  it('reads its flags with defaults and refuses a bad number', () => {
    expect(simulateOptions([])).toMatchObject({
      players: 10_000,
      seconds: 3_600,
      drainSeconds: 300,
    });
    expect(() => simulateOptions(['--players', '0'])).toThrow('--players must be an integer >= 1');
    expect(() => simulateOptions(['--bogus'])).toThrow();
  });
});
