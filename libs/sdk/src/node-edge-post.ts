import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { EdgePost } from './edge-probe';

// Kept-alive connections: a challenge and its answer share one, so no handshake is inside the RTT.
// An agent unrefs its idle sockets, so they never hold a process open.
const httpAgent = new HttpAgent({ keepAlive: true, noDelay: true });
const httpsAgent = new HttpsAgent({ keepAlive: true, noDelay: true });

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
  new Promise((resolve, reject) => {
    const target = new URL(url);
    const secure = target.protocol === 'https:';
    const request = (secure ? httpsRequest : httpRequest)(
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
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.end(body);
  });
