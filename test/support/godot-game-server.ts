import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, REPO_ROOT } from './processes';
import { describeLiveJourney, expectOnePlayerRejoined } from './sdk-live-stack';

/*
 * The GDScript game server of the Godot live journeys (test/sdk-live/godot-*live.spec.ts):
 * sdks/godot/live/game_server.gd, run by Debian's godot3-server.
 */

export const GODOT_DIR = path.join(REPO_ROOT, 'sdks/godot');
export const GODOT = process.env.GODOT ?? 'godot3-server';
/** What game_server.gd registers as (its IMAGE_DIGEST); the reference server says sha256:journey. */
export const GDSCRIPT_SERVER_DIGEST = 'gdscript:sdks/godot/live/game_server.gd';

/**
 * The allocator's local provider starts each game server as `node <LOCAL_SERVER_ENTRY>` with only
 * the GameServerEnv variables and LOCAL_SERVER_ENV: the entry written here runs game_server.gd in
 * godot3-server with them instead, passes a SIGTERM on (the allocation released) and exits with
 * its code. It is written at run time rather than kept as a .js file in sdks/, which the
 * TypeScript lint would not parse. Answers its path and how to remove it.
 */
export function writeGodotGameServerEntry(): { entry: string; remove: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'godot-live-'));
  const entry = path.join(dir, 'game-server-entry.js');
  writeFileSync(
    entry,
    `'use strict';
const { spawn } = require('node:child_process');
const child = spawn(${JSON.stringify(GODOT)}, ['--path', ${JSON.stringify(GODOT_DIR)}, '-s', 'live/game_server.gd'], {
  stdio: 'inherit',
  // Godot wants a HOME for its user data; the provider hands over none.
  env: { HOME: ${JSON.stringify(dir)}, PATH: ${JSON.stringify(process.env.PATH ?? '/usr/bin:/bin')}, ...process.env, LC_ALL: 'C.UTF-8' },
});
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));
child.on('error', (error) => {
  console.error('cannot start the GDScript game server: ' + error.message);
  process.exit(1);
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
`,
  );
  return { entry, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface GodotJourneyOptions {
  /** The suite (sdks/run-tests.sh) and the journey's summary line prefix. */
  readonly suite: string;
  readonly mode: string;
  /** Four players, two of them a party (live_journey.gd --party); else a duel of two. */
  readonly party?: boolean;
  /** Every app's variables over the journey's (e.g. QUEUE_MODES with the party's mode). */
  readonly env?: Record<string, string>;
  /**
   * The mode's matches wait for a ready check (QUEUE_ACCEPTANCE_TIMEOUTS): each player accepts
   * when its socket announces it (live_journey.gd --ready-check), one more revision of the match.
   */
  readonly readyCheck?: boolean;
  /** Players a and b first go through a lobby and a's block list (live_journey.gd --lobby). */
  readonly lobby?: boolean;
}

/**
 * A Godot live journey (sdks/godot/live/live_journey.gd, headless in godot3-server) against the
 * SDK live stack with the GDScript game server: the image digest it registers with is the proof it
 * was the one. Player a drops its game connection mid-game and rejoins (match_play.gd): the server
 * reports it LEFT and REJOINED, two more revisions of the match (7 in all). The players are given
 * an API replica that is down before the real one, so they play through the client's failover.
 */
export function describeGodotJourney(options: GodotJourneyOptions): void {
  const server = writeGodotGameServerEntry();
  afterAll(() => server.remove());
  const players = options.party ? 4 : 2;
  /** A port nothing listens on: the API replica that is down. */
  let downReplicaPort = 0;
  const acceptance = options.readyCheck
    ? { QUEUE_ACCEPTANCE_TIMEOUTS: `${options.mode}=60000` }
    : undefined;
  const env = options.env || acceptance ? { ...options.env, ...acceptance } : undefined;
  describeLiveJourney({
    suite: options.suite,
    sdk: 'GDScript',
    plays: options.party ? 'a party and two solo players play a 2x2 match' : undefined,
    async build() {
      downReplicaPort = await freePort();
    },
    command: (plane) => ({
      file: GODOT,
      args: [
        '--path',
        '.',
        '-s',
        'live/live_journey.gd',
        `--api=http://127.0.0.1:${downReplicaPort},${plane.apiUrl(0)}`,
        `--keys=${plane.keys.file}`,
        `--mode=${options.mode}`,
        `--suite=${options.suite}`,
        ...(options.party ? ['--party'] : []),
        ...(options.readyCheck ? ['--ready-check'] : []),
        ...(options.lobby ? ['--lobby'] : []),
      ],
      cwd: GODOT_DIR,
    }),
    timeoutMs: 120_000,
    stack: {
      gameServerEntry: server.entry,
      // Long enough for a drop and a rejoin on a loaded machine.
      gameServerEnv: { MATCH_DURATION_MS: '5000' },
      ...(env ? { env } : {}),
    },
    matchRevision: options.readyCheck ? 8 : 7,
    async verify(plane) {
      const allocations = await plane.ds.query<{ server_image_digest: string | null }[]>(
        `SELECT server_image_digest FROM allocations`,
      );
      expect(allocations.map((row) => row.server_image_digest)).toEqual([GDSCRIPT_SERVER_DIGEST]);
      await expectOnePlayerRejoined(plane, players);
    },
  });
}
