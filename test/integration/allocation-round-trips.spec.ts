import { DataSource } from 'typeorm';
import { ServerRoutes, SERVER_PROTOCOL_VERSION } from '@matchplane/contracts';
import { AllocationService } from '../../apps/allocator/src/allocation.service';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { StatementCounter } from '../support/statement-counter';
import {
  CapturingHandOff,
  commitMatch,
  KeyFiles,
  matchState,
  queuePlayers,
  serverCall,
  startInProcessAllocator,
  type InProcessAllocator,
} from '../support/allocation-harness';

/**
 * Under a burst every new match costs one allocation and one registration, and their cost is
 * their round trips to PostgreSQL: these hold both to their budget (load-independent, unlike a
 * benchmark on a shared machine).
 */
describe('allocation and registration round trips', () => {
  const keys = new KeyFiles();
  const handOff = new CapturingHandOff();
  let api: PlayerApi;
  let allocator: InProcessAllocator;

  beforeAll(async () => {
    // No dispatcher: the allocation below is run directly, not by the worker.
    api = await startPlayerApi();
    allocator = await startInProcessAllocator(
      api,
      {
        JOIN_KEYS_FILE: keys.write('keys.json', ['k1']),
        JOIN_ACTIVE_KEY_ID: 'k1',
        ALLOCATION_PROVIDER: 'static',
        STATIC_SERVERS: 'gs-1=127.0.0.1:7777,gs-2=127.0.0.1:7778',
        STATIC_HANDOFF_URL: 'http://{host}:{port}/handoff',
      },
      { handOff },
    );
  });

  afterAll(async () => {
    await allocator?.close();
    await api?.close();
    keys.remove();
  });

  it('allocates a match in six statements and registers its server in one short transaction', async () => {
    const players = await queuePlayers(api, 2, 'duel');
    const matchId = await commitMatch(api, players, 'duel');

    const allocatorStatements = new StatementCounter(allocator.app.get(DataSource));
    const allocation = await allocatorStatements.during(() =>
      allocator.app.get(AllocationService).run(matchId),
    );
    allocatorStatements.stop();
    expect(allocation.result).toBe('allocated');
    // Load the match; load its progress; the pool's live servers; record the allocation with its
    // credential; publish the roster; mark the hand-off. Each a statement of its own.
    expect(allocation.statements).toHaveLength(6);
    expect(allocation.statements.filter((s) => /^(START TRANSACTION|BEGIN)/i.test(s))).toEqual([]);

    const given = handOff.latest(matchId)!;
    const apiStatements = new StatementCounter(api.app.get(DataSource));
    const registration = await apiStatements.during(() =>
      serverCall(api, 'POST', ServerRoutes.register(given.serverId), given.credential, {
        protocolVersion: SERVER_PROTOCOL_VERSION,
        imageDigest: 'sha256:test',
      }),
    );
    apiStatements.stop();
    expect(registration.result.statusCode).toBe(200);
    expect(await matchState(api.ds, matchId)).toMatchObject({ state: 'ASSIGNMENT_READY' });
    // The credential lookup, then one READ COMMITTED transaction (no isolation statement): lock
    // the match and its tickets, read the roster, move the match two steps in one statement and
    // the tickets in another, each appending its envelopes in that same statement, and record the
    // registration.
    const statements = registration.statements;
    expect(statements.filter((s) => s === 'START TRANSACTION')).toHaveLength(1);
    expect(statements.filter((s) => /ISOLATION/i.test(s))).toEqual([]);
    expect(statements.filter((s) => /^INSERT INTO outbox/i.test(s))).toEqual([]);
    expect(statements).toHaveLength(9);
  });
});
