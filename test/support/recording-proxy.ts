import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One HTTP exchange as a client saw it. */
export interface RecordedExchange {
  readonly method: string;
  /** The path without the query. */
  readonly path: string;
  readonly status: number;
  readonly contentType: string;
  /** Parsed JSON, or undefined for an empty body. */
  readonly body: unknown;
}

export interface RecordingProxy {
  readonly url: string;
  readonly exchanges: RecordedExchange[];
  close(): Promise<void>;
}

/**
 * A pass-through HTTP proxy that records every answer, for callers the test cannot hand a fetch
 * (a game server reporting to the API). `target()` is read per request, so the proxy can start
 * before the API it forwards to.
 */
export async function startRecordingProxy(target: () => string): Promise<RecordingProxy> {
  const exchanges: RecordedExchange[] = [];
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const url = new URL(incoming.url ?? '/', target());
      const forwarded = httpRequest(
        url,
        { method: incoming.method, headers: { ...incoming.headers, host: url.host } },
        (answer) => {
          const answerChunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => answerChunks.push(chunk));
          answer.on('end', () => {
            const text = Buffer.concat(answerChunks).toString('utf8');
            exchanges.push({
              method: incoming.method ?? 'GET',
              path: url.pathname,
              status: answer.statusCode ?? 0,
              contentType: String(answer.headers['content-type'] ?? ''),
              body: text ? (JSON.parse(text) as unknown) : undefined,
            });
            outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
            outgoing.end(text);
          });
        },
      );
      forwarded.on('error', () => {
        outgoing.writeHead(502);
        outgoing.end();
      });
      forwarded.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
