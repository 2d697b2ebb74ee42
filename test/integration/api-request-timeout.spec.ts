import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { startPlayerApi, type PlayerApi } from '../support/player-api';

/** What a client trickling its request over `socket` is answered, and when the socket closed. */
interface Trickled {
  answer: string;
  closedAfterMs: number;
}

const REQUEST_TIMEOUT_MS = 2_000;
const HEADERS_TIMEOUT_MS = 1_000;

/**
 * A request whose headers or body arrive too slowly (a byte at a time, a slowloris) holds a
 * connection only for API_HEADERS_TIMEOUT_MS / API_REQUEST_TIMEOUT_MS, then is answered 408
 * problem+json and closed; a slow but steady client finishing inside the window is served.
 */
describe('request timeouts', () => {
  let api: PlayerApi;
  let port: number;

  beforeAll(async () => {
    api = await startPlayerApi({
      API_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      API_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    });
    await api.app.listen(0, '127.0.0.1');
    port = (api.app.getHttpServer().address() as AddressInfo).port;
  });
  afterAll(() => api?.close());

  /** Writes `head`, then `body` in `chunks` pieces `gapMs` apart; resolves when the server closes. */
  function trickle(head: string, body: string, chunks: number, gapMs: number): Promise<Trickled> {
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const socket: Socket = connect(port, '127.0.0.1');
      let answer = '';
      let timer: NodeJS.Timeout | undefined;
      socket.setEncoding('utf8');
      socket.on('data', (data: string) => (answer += data));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearTimeout(timer);
        resolve({ answer, closedAfterMs: Date.now() - started });
      });
      socket.on('connect', () => {
        socket.write(head);
        const size = Math.ceil(body.length / chunks);
        let sent = 0;
        const next = () => {
          if (sent >= body.length || socket.destroyed) return;
          socket.write(body.slice(sent, sent + size));
          sent += size;
          timer = setTimeout(next, gapMs);
        };
        next();
      });
      setTimeout(() => reject(new Error(`still open: ${answer}`)), 20_000).unref();
    });
  }

  const body = JSON.stringify({ mode: 'pair', attributes: { note: 'x'.repeat(200) } });
  const head = (length: number) =>
    `POST /v1/queue/tickets HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${length}\r\nConnection: close\r\n\r\n`;

  it('answers a body sent a byte at a time with 408 problem+json once the request timeout passes', async () => {
    const slow = await trickle(head(body.length), body, body.length, 200);
    expect(slow.answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(slow.answer).toMatch(/content-type: application\/problem\+json/i);
    expect(slow.answer).toContain('"code":"REQUEST_TIMEOUT"');
    // Timeouts are checked every quarter of the shortest one: closed soon after it, not at Node's 300 s.
    expect(slow.closedAfterMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
    expect(slow.closedAfterMs).toBeLessThan(REQUEST_TIMEOUT_MS * 2);
  });

  it('answers headers sent a few bytes at a time with 408 once the headers timeout passes', async () => {
    const slow = await trickle('', head(body.length), 200, 100);
    expect(slow.answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(slow.closedAfterMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
    expect(slow.closedAfterMs).toBeLessThan(REQUEST_TIMEOUT_MS * 2);
  });

  it('serves a slow but steady client that finishes inside the window', async () => {
    // Five pieces 200 ms apart: a mobile link far slower than any real one for a body this size.
    const steady = await trickle(head(body.length), body, 5, 200);
    // No session: the route answers 401, which proves the request was read whole and routed.
    expect(steady.answer).toMatch(/^HTTP\/1\.1 401 /);
  });
});
