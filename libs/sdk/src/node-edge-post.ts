import { Agent as HttpAgent, request as httpRequest, type ClientRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { EdgePost, EdgeReply } from './edge-probe';

// Kept-alive connections: a challenge and its answer share one, so no handshake is inside the RTT.
// An agent unrefs its idle sockets, so they never hold a process open. With a socket timeout set,
// the agent also drops an idle socket a second before the server's `Keep-Alive: timeout=N` would.
const AGENT_OPTIONS = { keepAlive: true, noDelay: true, timeout: 30_000 };
const httpAgent = new HttpAgent(AGENT_OPTIONS);
const httpsAgent = new HttpsAgent(AGENT_OPTIONS);

function timeoutError(timeoutMs: number): Error {
  const error = new Error(`no answer within ${timeoutMs} ms`);
  error.name = 'TimeoutError';
  return error;
}

/**
 * A probe edge's POST on node:http(s): the reply is handed back as soon as its last byte is read,
 * with none of fetch's stream machinery in between (a sample holds the client's turnaround).
 */
export const nodeEdgePost: EdgePost = (url, body, timeoutMs) =>
  post(url, body, Date.now() + timeoutMs, true);

/**
 * Sends once. A kept-alive socket the server closed just as it was reused (the close still in
 * flight, or held back by a slow path) is sent again once (`mayResend`), as Node's docs advise;
 * the resend's own failure is the caller's error. Both routes may be repeated: a second challenge
 * or measurement of the same answer is harmless.
 */
function post(url: string, body: string, deadline: number, mayResend: boolean): Promise<EdgeReply> {
  return new Promise((resolve, reject) => {
    const timeoutMs = Math.max(1, deadline - Date.now());
    const target = new URL(url);
    const secure = target.protocol === 'https:';
    const request: ClientRequest = (secure ? httpsRequest : httpRequest)(
      target,
      {
        method: 'POST',
        agent: secure ? httpsAgent : httpAgent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          clearTimeout(timer);
          const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8');
          resolve({ status: response.statusCode ?? 0, text });
        });
        response.on('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
      },
    );
    const timer = setTimeout(() => request.destroy(timeoutError(timeoutMs)), timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (mayResend && request.reusedSocket && error.code === 'ECONNRESET') {
        resolve(post(url, body, deadline, false));
      } else {
        reject(error);
      }
    });
    request.end(body);
  });
}
