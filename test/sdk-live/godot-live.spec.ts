import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../support/processes';
import { describeLiveJourney } from '../support/sdk-live-stack';

/*
 * The GDScript player client plays one duel to COMPLETED against the real stack (issue 36 item 5;
 * the stack: test/support/sdk-live-stack.ts). sdks/godot/live/live_journey.gd does the playing,
 * headless in Debian's godot3-server, and counts its checks; sdks/run-tests.sh runs this file as
 * the "godot-live" suite (it is not part of `npm test`: it needs godot3-server). The game server
 * is GDScript too: the allocator launches sdks/godot/live/game_server.gd, which registers, reports
 * initial-connect and the result with the GDScript server client; the image digest it registers
 * with is the proof it was the one. Player a drops its game connection mid-game and rejoins
 * (match_play.gd): the server reports it LEFT and REJOINED, two more revisions of the match.
 */

const GODOT_DIR = path.join(REPO_ROOT, 'sdks/godot');
const GODOT = process.env.GODOT ?? 'godot3-server';
/** What game_server.gd registers as (its IMAGE_DIGEST); the reference server says sha256:journey. */
const GDSCRIPT_SERVER_DIGEST = 'gdscript:sdks/godot/live/game_server.gd';

/**
 * The allocator's local provider starts each game server as `node <LOCAL_SERVER_ENTRY>` with only
 * the GameServerEnv variables and LOCAL_SERVER_ENV: this entry runs game_server.gd in godot3-server
 * with them instead, passes a SIGTERM on (the allocation released) and exits with its code. It is
 * written here rather than kept as a .js file in sdks/, which the TypeScript lint would not parse.
 */
const ENTRY_DIR = mkdtempSync(path.join(os.tmpdir(), 'godot-live-'));
const GAME_SERVER_ENTRY = path.join(ENTRY_DIR, 'game-server-entry.js');
writeFileSync(
  GAME_SERVER_ENTRY,
  `'use strict';
const { spawn } = require('node:child_process');
const child = spawn(${JSON.stringify(GODOT)}, ['--path', ${JSON.stringify(GODOT_DIR)}, '-s', 'live/game_server.gd'], {
  stdio: 'inherit',
  // Godot wants a HOME for its user data; the provider hands over none.
  env: { HOME: ${JSON.stringify(ENTRY_DIR)}, PATH: ${JSON.stringify(process.env.PATH ?? '/usr/bin:/bin')}, ...process.env, LC_ALL: 'C.UTF-8' },
});
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));
child.on('error', (error) => {
  console.error('cannot start the GDScript game server: ' + error.message);
  process.exit(1);
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
`,
);
afterAll(() => rmSync(ENTRY_DIR, { recursive: true, force: true }));

describeLiveJourney({
  suite: 'godot-live',
  sdk: 'GDScript',
  command: (plane) => ({
    file: GODOT,
    args: [
      '--path',
      '.',
      '-s',
      'live/live_journey.gd',
      `--api=${plane.apiUrl(0)}`,
      `--keys=${plane.keys.file}`,
      '--mode=duel',
    ],
    cwd: GODOT_DIR,
  }),
  timeoutMs: 120_000,
  stack: {
    gameServerEntry: GAME_SERVER_ENTRY,
    // Long enough for a drop and a rejoin on a loaded machine.
    gameServerEnv: { MATCH_DURATION_MS: '5000' },
  },
  matchRevision: 7,
  async verify(plane) {
    const allocations = await plane.ds.query<{ server_image_digest: string | null }[]>(
      `SELECT server_image_digest FROM allocations`,
    );
    expect(allocations.map((row) => row.server_image_digest)).toEqual([GDSCRIPT_SERVER_DIGEST]);
    // The server's presence reports, as the control plane recorded them: one player left once
    // and came back (not abandoned, no longer LEFT), the other never left.
    const presence = await plane.ds.query<
      { leave_count: number; left: boolean; abandoned: boolean }[]
    >(
      `SELECT leave_count, left_at IS NOT NULL AS left, abandoned_at IS NOT NULL AS abandoned
         FROM match_participants ORDER BY leave_count`,
    );
    expect(presence).toEqual([
      { leave_count: 0, left: false, abandoned: false },
      { leave_count: 1, left: false, abandoned: false },
    ]);
  },
});
