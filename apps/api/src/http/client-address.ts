import type { IncomingMessage } from 'node:http';

/**
 * The client's address as Fastify's `trustProxy: hops` computes `request.ip`, for the WebSocket
 * upgrade (which never reaches Fastify): the peer, or the X-Forwarded-For entry `hops` proxies back.
 */
export function clientAddress(request: IncomingMessage, trustedHops: number): string {
  const peer = request.socket.remoteAddress ?? 'unknown';
  if (trustedHops === 0) return peer;
  const header = request.headers['x-forwarded-for'];
  const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .reverse();
  const chain = [peer, ...forwarded];
  return chain[Math.min(trustedHops, chain.length - 1)] ?? peer;
}
