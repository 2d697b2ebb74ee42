/*
 * Played by test/e2e/sdk-package.spec.ts from a scratch project outside the repository, against the
 * packed @matchplane/sdk: compiled there against the package's own types (no Node types), then run
 * with `node`. Two players queue for a duel and play it to its end; the result goes to stdout.
 */
import { PlayerClient, type GameEnded } from '@matchplane/sdk';
import { nodeWebSocket } from '@matchplane/sdk/node';
import { ErrorCode, type MatchEventMessage } from '@matchplane/sdk/contracts';

export interface PlayerOutcome {
  playerId: string;
  matchId: string;
  endpoint: string;
  team: number;
  joinedAs: string;
  ended: GameEnded;
  ticketState: string;
  notifiedStates: string[];
}

async function play(baseUrl: string, name: string): Promise<PlayerOutcome> {
  const client = new PlayerClient({ baseUrl, webSocket: nodeWebSocket, retries: 3 });
  const session = await client.createSession();
  const { measured } = await client.probeAll(['eu-west'], { samples: 1 });
  if (!measured['eu-west']) throw new Error(`${name} measured no region`);

  const events: MatchEventMessage[] = [];
  const subscription = client.subscribe({ onEvent: (event) => events.push(event) });
  await subscription.ready;

  const ticket = await client.enqueue('duel');
  const heartbeats = client.startHeartbeats(ticket.id);
  const matched = await client.waitForTicket(ticket.id, (t) => t.state !== 'SEARCHING', {
    timeoutMs: 60_000,
    pollMs: 100,
  });
  const matchId = matched.matchId;
  if (matchId === undefined) throw new Error(`${name} left the queue unmatched: ${matched.state}`);

  const assignment = await client.waitForAssignment(matchId, { timeoutMs: 60_000, pollMs: 100 });
  const game = await client.joinMatch(assignment);
  const ended = await game.ended;
  const finished = await client.waitForTicket(
    ticket.id,
    (t) => !['SEARCHING', 'MATCHED', 'ASSIGNED', 'CONNECTED'].includes(t.state),
    { timeoutMs: 60_000, pollMs: 100 },
  );
  heartbeats.stop();
  const deadline = Date.now() + 20_000;
  while (!events.some((event) => event.state === 'COMPLETED') && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  subscription.close();
  return {
    playerId: session.playerId,
    matchId,
    endpoint: assignment.endpoint,
    team: assignment.team,
    joinedAs: game.playerId,
    ended,
    ticketState: finished.state,
    notifiedStates: events.filter((event) => event.matchId === matchId).map((e) => e.state),
  };
}

export async function main(baseUrl: string): Promise<string> {
  // The contracts ship inside the package: an error code is one of its constants.
  if (ErrorCode.ASSIGNMENT_NOT_READY !== 'ASSIGNMENT_NOT_READY') throw new Error('contracts');
  const outcomes = await Promise.all([play(baseUrl, 'a'), play(baseUrl, 'b')]);
  return JSON.stringify(outcomes);
}
