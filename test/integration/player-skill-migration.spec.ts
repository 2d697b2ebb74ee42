import { Migrator } from '@matchplane/persistence';
import { allMigrations } from '@matchplane/migrations';
import { PlayerSkill1764600000000 } from '../../migrations/1764600000000-player-skill';
import { DEFAULT_SKILL, displayRating } from '@matchplane/domain';
import { createTestDatabase, type TestDatabase } from '../support/database';

/*
 * Players who existed before ratings had an uncertainty keep the display rating the matcher reads:
 * the migration gives them openskill's prior sigma and the mu that shows as their rating. Rows
 * from before the migration can only be made by hand; production code never writes that schema.
 */
describe(PlayerSkill1764600000000.name, () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(() => db.drop());

  it('keeps every existing display rating, at the prior uncertainty, and its down() removes the columns', async () => {
    const ds = await db.dataSource();
    const migrator = new Migrator(ds);
    const index = allMigrations.indexOf(PlayerSkill1764600000000);
    expect(index).toBeGreaterThan(0);
    await migrator.rollback(allMigrations.length - index);
    const columns = async () =>
      (
        await ds.query<{ column_name: string }[]>(
          `SELECT column_name FROM information_schema.columns
            WHERE table_name = 'players' AND column_name LIKE 'rating%' ORDER BY column_name`,
        )
      ).map((row) => row.column_name);
    expect(await columns()).toEqual(['rating', 'rating_deviation']);

    const ratings = [1500, 1740, 1213.5];
    const ids = await Promise.all(
      ratings.map(async (rating) => {
        const [row] = await ds.query<{ id: string }[]>(
          `INSERT INTO players (rating) VALUES ($1) RETURNING id`,
          [rating],
        );
        return row!.id;
      }),
    );
    await migrator.up();
    expect(await columns()).toEqual([
      'rating',
      'rating_deviation',
      'rating_mu',
      'rating_revision',
      'rating_sigma',
      'rating_updated_at',
    ]);

    const rows = await ds.query<
      {
        id: string;
        rating: number;
        rating_mu: number;
        rating_sigma: number;
        rating_revision: string;
      }[]
    >(
      `SELECT id, rating, rating_mu, rating_sigma, rating_revision FROM players WHERE id = ANY($1)`,
      [ids],
    );
    for (const [i, id] of ids.entries()) {
      const row = rows.find((r) => r.id === id)!;
      expect(row.rating).toBe(ratings[i]);
      expect(row.rating_sigma).toBeCloseTo(DEFAULT_SKILL.sigma, 12);
      expect(displayRating({ mu: row.rating_mu, sigma: row.rating_sigma })).toBeCloseTo(
        row.rating,
        9,
      );
      expect(row.rating_revision).toBe('0');
    }
    expect(rows.find((r) => r.id === ids[0])!.rating_mu).toBeCloseTo(DEFAULT_SKILL.mu, 12);
    await expect(
      ds.query(`UPDATE players SET rating_sigma = 0 WHERE id = $1`, [ids[0]]),
    ).rejects.toThrow(/players_rating_sigma_positive/);
  });
});
