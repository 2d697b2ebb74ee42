import { ChaosProgram, expectNothingLost, type ChaosResult } from '../support/chaos-program';

/*
 * The chaos run in its short form (`npm run chaos` with a few faults and a bounded time): its own
 * PostgreSQL cluster and Redis server, the whole stack on them, SDK players through full journeys,
 * and during the run an API replica and a dispatcher SIGKILLed and restarted, Redis and PostgreSQL
 * crashed and restarted, the game server of a match in progress SIGKILLed. The program compares the outbox rows committed in its PostgreSQL with
 * what each player's subscription delivered; this suite holds it to the targets.
 */

const FAULTS = ['api#0', 'dispatcher#0', 'redis', 'postgres', 'game-server'];
/** The apps' SERVER_HEARTBEAT_TIMEOUT_MS in the chaos run, and the 2 s the issue allows past it. */
const PLAYERS_FREE_BOUND_MS = 10_000 + 2_000;
/**
 * The program's own target is 5 s per fault; on a shared 2-core CI runner a restarted app takes
 * longer to come up, so the suite allows twice that (a reliability bound, not a speed figure).
 */
const STALL_BOUND_MS = 10_000;

interface ChaosResultWithServerLoss extends ChaosResult {
  server_loss: {
    matches: number;
    players_free_ms: { p50: number; p99: number; max: number };
    players_stranded: number;
    ended: Record<string, number>;
  };
}

describe('chaos run (short form)', () => {
  const program = new ChaosProgram();

  afterAll(() => program.interrupt());

  it('loses, strands, duplicates and reorders nothing while apps, Redis and PostgreSQL are killed', async () => {
    const outcome = await program.runShort<ChaosResultWithServerLoss>(FAULTS);
    expectNothingLost(outcome, FAULTS);
    const { result } = outcome;
    // The killed game server's match failed SERVER_LOST and each of its players queued again in time.
    expect(result.server_loss).toMatchObject({
      matches: 1,
      players_stranded: 0,
      ended: { 'FAILED SERVER_LOST': 1 },
    });
    expect(result.server_loss.players_free_ms.max).toBeLessThanOrEqual(PLAYERS_FREE_BOUND_MS);
    for (const [fault, stallMs] of Object.entries(result.longest_stall_ms_by_fault))
      expect({ fault, stallMs, within: stallMs <= STALL_BOUND_MS }).toMatchObject({ within: true });
  }, 300_000);
});
