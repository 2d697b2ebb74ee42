import { describeGodotJourney } from '../support/godot-game-server';

/*
 * Four GDScript players play a 2x2 match to COMPLETED against the real stack, two of them as a
 * party: a creates it, b joins with the invite code, a queues the party (one ticket per member,
 * each heartbeating its own) while c and d queue alone; the party must share a team. The stack
 * and the game server are godot-live's (describeGodotJourney); sdks/run-tests.sh runs this file as
 * the "godot-party-live" suite.
 */
describeGodotJourney({
  suite: 'godot-party-live',
  mode: 'pair',
  party: true,
  env: { QUEUE_MODES: 'duel:1x2,pair:2x2' },
});
