import {
  ConfigError,
  homeShards,
  loadConfig,
  matcherShardPlan,
  readMatcherShardPlan,
  ServiceConfig,
  WHOLE_MODE,
  type MatcherShard,
} from '@matchplane/config';
import type { ProjectedCandidate } from '@matchplane/tickets';
import { MatcherConfig } from './matcher.config';
import { modeLockKey, shardLockKey } from './mode-lease';

const PLATFORM = {
  duel: {
    attributes: {
      platform: { type: 'string', values: ['pc', 'console'] },
      level: { type: 'number', min: 0, max: 100 },
      voice: { type: 'string', values: ['on', 'off'] },
    },
    rules: [{ equal: 'platform' }, { equal: 'level' }],
  },
};

function load(shards: unknown, attributes: unknown = PLATFORM, env: Record<string, string> = {}) {
  return loadConfig(MatcherConfig, {
    QUEUE_MODE_ATTRIBUTES: JSON.stringify(attributes),
    MATCHER_SHARDS: JSON.stringify(shards),
    ...env,
  });
}

function candidate(
  ticketId: string,
  predictedRtt: unknown,
  attributes: Record<string, string | number> = {},
): ProjectedCandidate {
  const at = new Date('2026-12-07T00:00:00Z');
  return {
    ticketId,
    playerId: `player-${ticketId}`,
    mode: 'duel',
    rating: 1500,
    predictedRtt,
    enqueuedAt: at,
    lastHeartbeatAt: at,
    state: 'SEARCHING',
    version: 1,
    attributes,
  };
}

/** Which shard (by name) takes each candidate, and the regions it is offered there. */
function placement(shards: readonly MatcherShard[], candidates: readonly ProjectedCandidate[]) {
  return candidates.map((c) =>
    shards.flatMap((shard) => {
      const seen = shard.select(c);
      return seen ? [`${shard.name}:${Object.keys(seen.predictedRtt as object).join('+')}`] : [];
    }),
  );
}

describe(matcherShardPlan.name, () => {
  it('leaves every mode one shard, the whole mode, under the unsharded lease key, by default', () => {
    const shards = matcherShardPlan(loadConfig(MatcherConfig, {}));
    expect([...shards.keys()]).toEqual(['duel', 'squad']);
    expect(shards.get('duel')?.map((s) => s.name)).toEqual([WHOLE_MODE]);
    const c = candidate('a', { 'eu-west': 20 });
    expect(shards.get('duel')?.[0]?.select(c)).toBe(c);
    // A matcher of an earlier release locks the same key: the two still exclude each other.
    expect(shardLockKey('duel', WHOLE_MODE)).toBe(modeLockKey('duel'));
    expect(shardLockKey('duel', 'pc')).not.toBe(modeLockKey('duel'));
  });

  it('splits a mode by an equal-rule attribute: one shard per declared value, a ticket in exactly one', () => {
    const shards = matcherShardPlan(load({ duel: { attribute: 'platform' } }));
    const duel = shards.get('duel') ?? [];
    expect(duel.map((s) => s.name)).toEqual(['pc', 'console']);
    expect(shards.get('squad')?.map((s) => s.name)).toEqual([WHOLE_MODE]);
    const rtt = { 'eu-west': 20 };
    expect(
      placement(duel, [
        candidate('pc', rtt, { platform: 'pc' }),
        candidate('console', rtt, { platform: 'console' }),
        // Queued before the attribute was declared, or with a value since removed: the first shard.
        candidate('old', rtt, {}),
        candidate('removed', rtt, { platform: 'switch' }),
      ]),
    ).toEqual([['pc:eu-west'], ['console:eu-west'], ['pc:eu-west'], ['pc:eu-west']]);
  });

  it('splits a mode by region groups, offering a ticket in each group it measured with only that group’s regions', () => {
    const duel =
      matcherShardPlan(
        load({ duel: { regions: { eu: ['eu-west', 'eu-central'], am: ['us-east'] } } }, PLATFORM, {
          PROBE_REGIONS: 'eu-west,eu-central,us-east',
        }),
      ).get('duel') ?? [];
    expect(duel.map((s) => s.name)).toEqual(['eu', 'am']);
    expect(
      placement(duel, [
        candidate('eu', { 'eu-west': 20, 'eu-central': 30 }),
        candidate('both', { 'eu-west': 90, 'us-east': 40 }),
        // A region no group lists belongs to the first group.
        candidate('unlisted', { 'ap-south': 40, 'us-east': 200 }),
        // No measured region: the first group alone explains NO_REGION.
        candidate('none', {}),
      ]),
    ).toEqual([
      ['eu:eu-west+eu-central'],
      ['eu:eu-west', 'am:us-east'],
      ['eu:ap-south', 'am:us-east'],
      ['eu:'],
    ]);
  });

  it("names a candidate's home shards by the shards' own select: the projection indexes it there", () => {
    const attribute = matcherShardPlan(load({ duel: { attribute: 'platform' } }));
    const rtt = { 'eu-west': 20 };
    expect(homeShards(attribute, 'duel', candidate('a', rtt, { platform: 'console' }))).toEqual([
      'console',
    ]);
    expect(homeShards(attribute, 'duel', candidate('b', rtt, {}))).toEqual(['pc']);
    // A mode the plan does not split has no shard sets: its pass reads the mode's whole index.
    expect(homeShards(attribute, 'squad', candidate('c', rtt))).toEqual([]);
    const regions = matcherShardPlan(
      load({ duel: { regions: { eu: ['eu-west'], am: ['us-east'] } } }, PLATFORM, {
        PROBE_REGIONS: 'eu-west,us-east',
      }),
    );
    const both = candidate('d', { 'eu-west': 30, 'us-east': 40 });
    expect(homeShards(regions, 'duel', both)).toEqual(['eu', 'am']);
    expect(placement(regions.get('duel') ?? [], [both])).toEqual([['eu:eu-west', 'am:us-east']]);
  });

  it('is read once per configuration, and by every app: a writer of tickets refuses what the matcher would', () => {
    const config = load({ duel: { attribute: 'platform' } });
    expect(matcherShardPlan(config)).toBe(readMatcherShardPlan(config).shards);
    expect(() =>
      loadConfig(ServiceConfig, {
        QUEUE_MODE_ATTRIBUTES: JSON.stringify(PLATFORM),
        MATCHER_SHARDS: JSON.stringify({ duel: { attribute: 'voice' } }),
      }),
    ).toThrow(
      new ConfigError([
        'MATCHER_SHARDS.duel.attribute must name an attribute of an "equal" rule of mode duel in QUEUE_MODE_ATTRIBUTES (it has platform, level; got "voice")',
      ]),
    );
  });

  it.each([
    [
      'a mode QUEUE_MODES does not list',
      { chess: { attribute: 'platform' } },
      'MATCHER_SHARDS names mode "chess", which QUEUE_MODES does not list',
    ],
    [
      'an attribute without an equal rule',
      { duel: { attribute: 'voice' } },
      'MATCHER_SHARDS.duel.attribute must name an attribute of an "equal" rule of mode duel in QUEUE_MODE_ATTRIBUTES (it has platform, level; got "voice")',
    ],
    [
      'a mode without attributes',
      { squad: { attribute: 'platform' } },
      'MATCHER_SHARDS.squad.attribute must name an attribute of an "equal" rule of mode squad in QUEUE_MODE_ATTRIBUTES (it has none; got "platform")',
    ],
    [
      'a number attribute',
      { duel: { attribute: 'level' } },
      'MATCHER_SHARDS.duel.attribute level must be a string attribute: its declared values are the shards',
    ],
    [
      'a region in two groups',
      { duel: { regions: { eu: ['eu-west'], all_eu: ['eu-west'] } } },
      'MATCHER_SHARDS.duel.regions: region eu-west is in groups eu and all_eu; a region belongs to one group',
    ],
    [
      'a region PROBE_REGIONS does not offer (a typo would move its tickets to the first group)',
      { duel: { regions: { eu: ['eu-west'], am: ['us-eats'] } } },
      'MATCHER_SHARDS.duel.regions.am names region us-eats, which PROBE_REGIONS does not list (eu-west, us-east, us-west, ap-southeast)',
    ],
    [
      'an empty group',
      { duel: { regions: { eu: [] } } },
      'MATCHER_SHARDS.duel.regions.eu must be a non-empty list of regions',
    ],
    [
      'a key that is neither',
      { duel: { attribute: 'platform', regions: {} } },
      'MATCHER_SHARDS.duel must be {"attribute": "<equal-rule attribute>"} or {"regions": {"<group>": ["<region>", ...]}}',
    ],
  ])('refuses to start on %s, naming the variable', (_case, shards, problem) => {
    expect(() => load(shards)).toThrow(new ConfigError([problem]));
  });

  it('refuses a pool too small for a lone matcher to hold every lease', () => {
    const shards = JSON.stringify({ duel: { attribute: 'platform' } });
    const env = { QUEUE_MODE_ATTRIBUTES: JSON.stringify(PLATFORM), MATCHER_SHARDS: shards };
    expect(() => loadConfig(MatcherConfig, { ...env, DATABASE_POOL_SIZE: '4' })).toThrow(
      new ConfigError([
        "DATABASE_POOL_SIZE 4 is too small for 3 matcher leases (one per shard, a shard per unsplit mode): a lone matcher holds each on a connection of its own, plus one for its presence and one for its passes' reads; set at least 5",
      ]),
    );
    expect(loadConfig(MatcherConfig, { ...env, DATABASE_POOL_SIZE: '5' }).MATCHER_SHARDS).toBe(
      shards,
    );
  });

  it('refuses MATCHER_SHARDS that is not a JSON object', () => {
    expect(() => loadConfig(MatcherConfig, { MATCHER_SHARDS: 'duel=platform' })).toThrow(
      /MATCHER_SHARDS must be a JSON object of mode -> shard key/,
    );
    expect(() => loadConfig(MatcherConfig, { MATCHER_SHARDS: '{duel' })).toThrow(
      /MATCHER_SHARDS is not JSON/,
    );
  });
});
