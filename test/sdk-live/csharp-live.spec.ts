import path from 'node:path';
import { freePort, REPO_ROOT } from '../support/processes';
import {
  describeLiveJourney,
  expectOnePlayerRejoined,
  runProgram,
} from '../support/sdk-live-stack';

/*
 * The C# player client plays one duel to COMPLETED against the real stack (issue 36 item 5; the
 * stack: test/support/sdk-live-stack.ts). sdks/csharp/live/LiveJourney.cs does the playing and
 * counts its checks; sdks/run-tests.sh runs this file as the "csharp-live" suite (it is not part
 * of `npm test`: it needs Debian's mono). Its players are given a replica that is down before the
 * real API, so they play through the client's failover. Duels have a ready check here (both
 * players accept), and player a drops its game connection mid-game and rejoins: the match's
 * revisions are the six states and a's leave and rejoin (8 in all). Before the duel, three guests
 * of the program's own go through the avoid list, which holds one player here so that a full list
 * is refused live too (sdks/csharp/live/AvoidListSteps.cs).
 */

const CSHARP_DIR = path.join(REPO_ROOT, 'sdks/csharp');
/** A port nothing listens on: the API replica that is down. */
let downReplicaPort = 0;

describeLiveJourney({
  suite: 'csharp-live',
  sdk: 'C#',
  async build() {
    const built = await runProgram('make', ['-s', 'live'], CSHARP_DIR, 120_000);
    if (built.code !== 0) throw new Error(`make -C sdks/csharp live failed:\n${built.output}`);
    downReplicaPort = await freePort();
  },
  command: (plane) => ({
    file: 'mono',
    args: [
      path.join(CSHARP_DIR, 'build/LiveJourney.exe'),
      `http://127.0.0.1:${downReplicaPort},${plane.apiUrl(0)}`,
      plane.keys.file,
      'duel',
    ],
    cwd: CSHARP_DIR,
  }),
  timeoutMs: 150_000,
  stack: {
    env: { QUEUE_ACCEPTANCE_TIMEOUTS: 'duel=30000', PLAYER_AVOID_LIST_MAX_ENTRIES: '1' },
    // Long enough for a drop and a rejoin on a loaded machine.
    gameServerEnv: { MATCH_DURATION_MS: '5000' },
  },
  matchRevision: 8,
  verify: (plane) => expectOnePlayerRejoined(plane, 2),
});
