import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import type { ApiConfig } from '../api.config';
import type { ProblemFilter } from './problem.filter';

type TimeoutConfig = Pick<ApiConfig, 'API_REQUEST_TIMEOUT_MS' | 'API_HEADERS_TIMEOUT_MS'>;

/**
 * Node's own limits on how long a client may take to send its request, as Fastify options. Node
 * looks for overdue requests every `connectionsCheckingInterval` (30 s by default, as long as
 * the timeout itself), so it checks four times per headers timeout here. Fastify's default
 * requestTimeout of 0 switched Node's off altogether: a client sending a byte a second held its
 * connection for as long as it liked.
 */
export function requestTimeoutOptions(config: TimeoutConfig) {
  const headersTimeout = Math.min(config.API_HEADERS_TIMEOUT_MS, config.API_REQUEST_TIMEOUT_MS);
  return {
    requestTimeout: config.API_REQUEST_TIMEOUT_MS,
    http: {
      headersTimeout,
      connectionsCheckingInterval: Math.max(100, Math.floor(headersTimeout / 4)),
    },
  };
}

/**
 * Answers an overdue request 408 REQUEST_TIMEOUT as problem+json (other malformed requests as
 * Node would: a bare 400 or 431) and closes the connection. Nothing is written once the
 * connection's response has begun, so an answer under way is never corrupted.
 */
export function clientErrorHandler(problems: ProblemFilter) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
    if (socket.writable && !inFlight?.headersSent)
      socket.write(rawAnswer(error, inFlight, problems));
    socket.destroy(error);
  };
}

function rawAnswer(
  error: Error & { code?: string },
  inFlight: ServerResponse | undefined,
  problems: ProblemFilter,
): string {
  if (error.code !== 'ERR_HTTP_REQUEST_TIMEOUT') {
    const status =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? '431 Request Header Fields Too Large'
        : '400 Bad Request';
    return `HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`;
  }
  const request = { url: inFlight?.req?.url ?? '' } as FastifyRequest;
  const { problem } = problems.toProblem(
    new CodedError(
      ErrorCode.REQUEST_TIMEOUT,
      'The request (headers and body) did not arrive within the time allowed; send it again',
    ),
    request,
  );
  const body = JSON.stringify(problem);
  return (
    `HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n` +
    `Content-Type: application/problem+json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}
