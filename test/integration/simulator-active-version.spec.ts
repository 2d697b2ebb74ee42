import type { DataSource } from 'typeorm';
import { RuleSetStore, type RuleVariables } from '@matchplane/rule-sets';
import { activeRuleSet } from '../../apps/matcher/src/simulation/active-version';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { freePort } from '../support/processes';

/*
 * The simulator's active rule set is the version the matchers run: the active row of `rule_sets`
 * over the environment, or the environment itself when no version is active or PostgreSQL is out
 * of reach (docs/SIMULATOR.md "Rule sets"). Versions are written through the table's own store.
 */
const ENV = {
  QUEUE_MODES: 'duel:1x2,squad:4x2',
  QUEUE_MODE_ATTRIBUTES: JSON.stringify({
    duel: { attributes: { platform: { type: 'string', values: ['pc', 'console'] } } },
  }),
};

describe(activeRuleSet.name, () => {
  let db: TestDatabase;
  let ds: DataSource;
  const store = new RuleSetStore();
  const warnings: string[] = [];
  const warn = (line: string) => warnings.push(line);

  beforeAll(async () => {
    db = await createTestDatabase();
    ds = await db.dataSource();
  });
  afterAll(() => db.drop());
  beforeEach(() => warnings.splice(0));

  function activate(rules: RuleVariables): Promise<number> {
    return ds.transaction(async (manager) => {
      const { version } = await store.create(manager, { rules, reason: 'test', createdBy: 'test' });
      await store.lockedVersion(manager, version);
      await store.activate(manager, version);
      return version;
    });
  }

  it('is the environment while no version is active, and writes none', async () => {
    const active = await activeRuleSet({ ...db.env, ...ENV }, warn);
    expect(active.version).toBe('environment');
    expect(active.rules.map((rule) => rule.mode)).toEqual(['duel', 'squad']);
    expect(warnings).toEqual([expect.stringContaining('no active rule set version')]);
    expect(await ds.query(`SELECT version FROM rule_sets`)).toEqual([]);
  });

  it('is the active version laid over the environment, its number said', async () => {
    await ds.transaction((manager) => store.seedEnvironment(manager));
    expect((await activeRuleSet({ ...db.env, ...ENV }, warn)).version).toBe(1);
    const version = await activate({
      MATCH_WIDENING_BY_MODE: 'squad=0:90:300',
      QUEUE_MODE_ATTRIBUTES: JSON.stringify({
        duel: { attributes: { platform: { type: 'string', values: ['pc', 'console', 'mobile'] } } },
      }),
    });
    const active = await activeRuleSet({ ...db.env, ...ENV }, warn);
    expect(active.version).toBe(version);
    expect(active.rules.find((rule) => rule.mode === 'squad')?.widening).toEqual([
      { afterMs: 0, maxRttMs: 90, ratingWindow: 300 },
    ]);
    const platform = active.attributes.get('duel')?.attributes[0];
    expect(platform).toMatchObject({ name: 'platform', values: ['pc', 'console', 'mobile'] });
    expect(warnings).toEqual([]);
  });

  it('refuses, naming the version and variable, a version the matcher would not run here', async () => {
    const version = await activate({ MATCH_WIDENING_BY_MODE: 'squad=0:90:300' });
    // An environment whose modes are not the deployment's: the matcher skips the version.
    await expect(
      activeRuleSet({ ...db.env, ...ENV, QUEUE_MODES: 'duel:1x2' }, warn),
    ).rejects.toThrow(
      new RegExp(
        `^active rule set version ${version} is not one the matcher runs.*MATCH_WIDENING_BY_MODE`,
      ),
    );
  });

  it('is the environment, saying why, when PostgreSQL is out of reach', async () => {
    const closed = await freePort();
    const active = await activeRuleSet(
      { ...ENV, DATABASE_URL: `postgres://postgres@127.0.0.1:${closed}/nowhere` },
      warn,
    );
    expect(active.version).toBe('environment');
    expect(warnings).toEqual([
      expect.stringMatching(new RegExp(`^active rule set not read at 127.0.0.1:${closed}/nowhere`)),
    ]);
  });
});
