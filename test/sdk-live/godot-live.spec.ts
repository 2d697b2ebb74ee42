import path from 'node:path';
import { REPO_ROOT } from '../support/processes';
import { describeLiveJourney } from '../support/sdk-live-stack';

/*
 * The GDScript player client plays one duel to COMPLETED against the real stack (issue 36 item 5;
 * the stack: test/support/sdk-live-stack.ts). sdks/godot/live/live_journey.gd does the playing,
 * headless in Debian's godot3-server, and counts its checks; sdks/run-tests.sh runs this file as
 * the "godot-live" suite (it is not part of `npm test`: it needs godot3-server).
 */

describeLiveJourney({
  suite: 'godot-live',
  sdk: 'GDScript',
  command: (plane) => ({
    file: process.env.GODOT ?? 'godot3-server',
    args: [
      '--path',
      '.',
      '-s',
      'live/live_journey.gd',
      `--api=${plane.apiUrl(0)}`,
      `--keys=${plane.keys.file}`,
      '--mode=duel',
    ],
    cwd: path.join(REPO_ROOT, 'sdks/godot'),
  }),
  timeoutMs: 120_000,
});
