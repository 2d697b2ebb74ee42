import { describeGodotJourney } from '../support/godot-game-server';

/*
 * The GDScript player client plays one duel to COMPLETED against the real stack (issue 36 item 5;
 * the stack: test/support/sdk-live-stack.ts). sdks/godot/live/live_journey.gd does the playing,
 * headless in Debian's godot3-server, and counts its checks; sdks/run-tests.sh runs this file as
 * the "godot-live" suite (it is not part of `npm test`: it needs godot3-server). The game server
 * is GDScript too: the allocator launches sdks/godot/live/game_server.gd, which registers, reports
 * initial-connect, the players' presence and the result with the GDScript server client (see
 * describeGodotJourney). Before queueing, the two players go through a lobby (created, joined by
 * its invite code, teams arranged, b kicked, closed) and a's block and avoid lists; the duel then
 * waits for its ready check, which each player accepts when its notification socket announces it.
 */
describeGodotJourney({ suite: 'godot-live', mode: 'duel', readyCheck: true, lobby: true });
