/*
 * bench:envelope — buildEnvelope per second on the events the writers produce: a match event
 * addressing two players and a ticket event. Load-independent enough to compare builds when run
 * twice each on the same machine (CPU only: no database, no I/O). One JSON line on stdout.
 */
import { randomUUID } from 'node:crypto';
import { createMatch, createTicket, transitionMatch, type DomainEvent } from '@matchplane/domain';
import { buildEnvelope } from '@matchplane/outbox';
import { parseFlags, usage, UsageError, type FlagSpec } from './bench.cli';

const FLAGS: FlagSpec[] = [
  {
    name: 'seconds',
    description: 'measured time per event kind',
    int: { min: 1, max: 60, default: 3 },
  },
];

function sampleEvents(): { match: DomainEvent; ticket: DomainEvent } {
  const now = new Date();
  const created = createMatch(
    {
      id: randomUUID(),
      mode: 'duel',
      region: 'eu-west',
      participants: [0, 1].map((team) => ({
        playerId: randomUUID(),
        ticketId: randomUUID(),
        team,
      })),
    },
    now,
  );
  const match = transitionMatch(created.match, { to: 'PROCESS_READY' }, now).events[0]!;
  const ticket = createTicket(
    {
      id: randomUUID(),
      playerId: randomUUID(),
      mode: 'duel',
      rating: 1500,
      predictedRtt: { 'eu-west': 20 },
    },
    now,
  ).events[0]!;
  return { match, ticket };
}

/** Envelopes built per second over `seconds` (after a warm-up of the same length / 3). */
function rate(event: DomainEvent, seconds: number): number {
  const run = (ms: number) => {
    const deadline = performance.now() + ms;
    let built = 0;
    while (performance.now() < deadline) {
      for (let i = 0; i < 100; i += 1) buildEnvelope(event);
      built += 100;
    }
    return built;
  };
  run((seconds * 1000) / 3);
  const started = performance.now();
  const built = run(seconds * 1000);
  return Math.round(built / ((performance.now() - started) / 1000));
}

function main(): void {
  let flags;
  try {
    flags = parseFlags(process.argv.slice(2), FLAGS);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(
      `${error.message}\n${usage('node dist/test/bench/envelope.bench.js', 'buildEnvelope per second', FLAGS)}`,
    );
    process.exit(2);
  }
  const seconds = flags.seconds as number;
  const { match, ticket } = sampleEvents();
  const result = {
    bench: 'envelope',
    match_state_changed_per_s: rate(match, seconds),
    ticket_state_changed_per_s: rate(ticket, seconds),
    node: process.version,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main();
