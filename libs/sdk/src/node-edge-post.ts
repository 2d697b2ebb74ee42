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
export const nodeEdgePost: EdgePost = async (url, body, timeoutMs) => {
  const deadline = Date.now() + timeoutMs;
  try {
    return await postOnce(url, body, timeoutMs);
  } catch (error) {
    // A kept-alive socket the server closed just as it was reused (the close still in flight, or
    // held back by a slow path): sent again once on a new connection, as Node's docs advise. Both
    // routes may be repeated: a second challenge or measurement of the same answer is harmless.
    if (!(error instanceof ReusedSocketReset)) throw error;
    return postOnce(url, body, Math.max(1, deadline - Date.now()));
  }
};

class ReusedSocketReset extends Error {}

function postOnce(url: string, body: string, timeoutMs: number): Promise<EdgeReply> {
  return new Promise((resolve, reject) => {
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
      const reset = request.reusedSocket && error.code === 'ECONNRESET';
      reject(reset ? new ReusedSocketReset(error.message, { cause: error }) : error);
    });
    request.end(body);
  });
}
