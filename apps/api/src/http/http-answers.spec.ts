import { Logger } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ErrorCode } from '@matchplane/contracts';
import { ALL_ERROR_CODES, CodedError, DomainErrorCode, LibraryErrorCode } from '@matchplane/errors';
import { HTTP_ANSWERS, problemType, wireCodeOf } from './http-answers';
import { ProblemFilter } from './problem.filter';

const request = { url: '/v1/queue/tickets', method: 'POST' } as FastifyRequest;
const wireCodes = new Set<string>(Object.values(ErrorCode));

describe('HTTP_ANSWERS', () => {
  const filter = new ProblemFilter();
  beforeAll(() => {
    Logger.overrideLogger(false);
  });

  it('keeps the wire, domain and library codes apart', () => {
    expect(new Set(ALL_ERROR_CODES).size).toBe(ALL_ERROR_CODES.length);
  });

  it.each(ALL_ERROR_CODES)('answers %s with an error status and a wire code', (code) => {
    const answer = HTTP_ANSWERS[code];
    expect(answer).toBeDefined();
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(600);
    // A wire code is answered as itself; any other code names the wire code it is answered as.
    if (wireCodes.has(code)) expect(answer.as).toBeUndefined();
    else expect(wireCodes.has(answer.as ?? '')).toBe(true);
  });

  it.each(ALL_ERROR_CODES)('renders a CodedError with code %s through the filter', (code) => {
    const { problem } = filter.toProblem(new CodedError(code, 'a message for the caller'), request);
    const answer = HTTP_ANSWERS[code];
    const wire = wireCodeOf(code);
    expect(problem).toMatchObject({ status: answer.status, code: wire, type: problemType(wire) });
    if (wire === ErrorCode.INTERNAL) {
      // An error the caller cannot act on: logged under a correlation id, its message withheld.
      expect(problem.detail).not.toContain('a message for the caller');
      expect(problem.correlationId).toEqual(expect.any(String));
    } else {
      expect(problem.detail).toBe(
        answer.detail?.('a message for the caller') ?? 'a message for the caller',
      );
    }
  });

  it('gives every wire code its own problem type', () => {
    const types = Object.values(ErrorCode).map(problemType);
    expect(new Set(types).size).toBe(types.length);
  });

  // The statuses clients and the OpenAPI contract rely on; a change here changes the wire.
  it.each([
    [DomainErrorCode.ILLEGAL_TRANSITION, 409, 'CONFLICT'],
    [DomainErrorCode.INVALID_ARGUMENT, 400, 'VALIDATION_FAILED'],
    [LibraryErrorCode.STALE_MATCH_REVISION, 409, 'CONFLICT'],
    [LibraryErrorCode.MATCH_NOT_FOUND, 404, 'NOT_FOUND'],
    [LibraryErrorCode.TRANSACTION_RETRIES_EXHAUSTED, 503, 'CONTENDED'],
    [ErrorCode.TICKET_ALREADY_LIVE, 409, 'TICKET_ALREADY_LIVE'],
    [ErrorCode.DEPENDENCY_UNAVAILABLE, 503, 'DEPENDENCY_UNAVAILABLE'],
    [ErrorCode.MATCH_ENDED, 410, 'MATCH_ENDED'],
  ] as const)('answers %s with %i %s', (code, status, wire) => {
    expect({ status: HTTP_ANSWERS[code].status, code: wireCodeOf(code) }).toEqual({
      status,
      code: wire,
    });
  });
});
