import { createServer, type AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { DomainError, DomainErrorCode } from '@matchplane/domain';
import { MatchNotFoundError, StaleMatchRevisionError } from '@matchplane/matches';
import { DatabaseConfig, loadConfig } from '@matchplane/config';
import { DatabaseHostChooser, TransactionRetriesExhaustedError } from '@matchplane/persistence';
import { StaleTicketRevisionError } from '@matchplane/tickets';
import { ProblemFilter } from './problem.filter';

/** A loopback port nobody listens on (bound, then released). */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const request = { url: '/v1/servers/gs-1/result', method: 'POST' } as FastifyRequest;
const matchId = '00000000-0000-4000-8000-000000000001';

/**
 * The library errors no route can reach on demand (they need a race inside one transaction);
 * the reachable ones (retries exhausted, lock timeout) are proven through HTTP in
 * test/integration/api-database-errors.spec.ts.
 */
describe(ProblemFilter.name, () => {
  const filter = new ProblemFilter();
  // The 500 case logs its correlation id and stack by design; not wanted in the test output.
  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  const answer = (error: unknown) => {
    const { problem, headers } = filter.toProblem(error, request);
    return { status: problem.status, code: problem.code, detail: problem.detail, headers };
  };

  it.each([
    [
      new TransactionRetriesExhaustedError(5, new Error('deadlock')),
      503,
      'CONTENDED',
      { 'retry-after': '1' },
    ],
    [new StaleMatchRevisionError(matchId, 3), 409, 'CONFLICT', {}],
    [new StaleTicketRevisionError(matchId, 2), 409, 'CONFLICT', {}],
    [new MatchNotFoundError(matchId), 404, 'NOT_FOUND', {}],
    [
      new DomainError(DomainErrorCode.ILLEGAL_TRANSITION, 'COMPLETED has no exit'),
      409,
      'CONFLICT',
      {},
    ],
    [
      new DomainError(DomainErrorCode.INVALID_ARGUMENT, 'duplicate participant'),
      400,
      'VALIDATION_FAILED',
      {},
    ],
    [
      Object.assign(new Error('terminating connection'), { code: '57P01' }),
      503,
      'DEPENDENCY_UNAVAILABLE',
      { 'retry-after': '1' },
    ],
    // What node-postgres raises while PostgreSQL restarts: no SQLSTATE, a socket error or its own message.
    [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
        code: 'ECONNREFUSED',
        syscall: 'connect',
      }),
      503,
      'DEPENDENCY_UNAVAILABLE',
      { 'retry-after': '1' },
    ],
    [
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', syscall: 'read' }),
      503,
      'DEPENDENCY_UNAVAILABLE',
      { 'retry-after': '1' },
    ],
    [
      new Error('Connection terminated unexpectedly'),
      503,
      'DEPENDENCY_UNAVAILABLE',
      { 'retry-after': '1' },
    ],
    [
      new Error('timeout exceeded when trying to connect'),
      503,
      'DEPENDENCY_UNAVAILABLE',
      { 'retry-after': '1' },
    ],
    [
      Object.assign(new Error('invalid byte sequence'), { code: '22021' }),
      400,
      'VALIDATION_FAILED',
      {},
    ],
  ])('answers %p with %i %s', (error, status, code, headers) => {
    expect(answer(error)).toMatchObject({ status, code, headers });
  });

  // Found by the chaos run's HA topology: between a primary's crash and the standby's promotion,
  // every listed host refuses or is read-only, and the requests of that window answered 500.
  it('answers 503 when no listed PostgreSQL host qualifies (a failover under way)', async () => {
    const [first, second] = [await closedPort(), await closedPort()];
    const chooser = new DatabaseHostChooser(
      loadConfig(DatabaseConfig, {
        DATABASE_URL: `postgres://postgres@127.0.0.1:${first},127.0.0.1:${second}/mp?target_session_attrs=read-write`,
      }),
      { user: 'postgres', database: 'mp' },
    );
    const failure = await chooser.choose().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(answer(failure)).toMatchObject({
      status: 503,
      code: 'DEPENDENCY_UNAVAILABLE',
      headers: { 'retry-after': '1' },
    });
  });

  it('keeps an unknown error a 500 whose detail discloses nothing', () => {
    const secret = Object.assign(new Error('password=hunter2'), { code: 'XX000' });
    const problem = answer(secret);
    expect(problem).toMatchObject({ status: 500, code: 'INTERNAL' });
    expect(problem.detail).not.toContain('hunter2');
  });
});
