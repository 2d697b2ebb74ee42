import { mkdtempSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  devOperatorTokens,
  devTokenOf,
  formatSummary,
  healthTargets,
  waitUntilHealthy,
  type StackEndpoints,
} from './stack-summary';

/** A server answering 200 on every path; closed by the returned function. */
async function healthy(port = 0): Promise<{ port: number; close: () => Promise<void> }> {
  const server = http.createServer((_request, response) => response.end('{"status":"ok"}'));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const stack = (apiPort: number, workerPort: number, token?: string): StackEndpoints => ({
  apiUrl: `http://127.0.0.1:${apiPort}`,
  probeEdges: [{ region: 'eu-west', endpoints: ['udp://127.0.0.1:7201', 'http://127.0.0.1:7101'] }],
  workers: [{ name: 'matcher', healthPort: workerPort }],
  devOperatorToken: token,
});

describe('npm run stack summary', () => {
  it("waits for the API's, each worker's and each edge's health URL", () => {
    expect(healthTargets(stack(3000, 9102))).toEqual([
      { name: 'api', healthUrl: 'http://127.0.0.1:3000/health' },
      { name: 'matcher', healthUrl: 'http://127.0.0.1:9102/health' },
      { name: 'edge eu-west', healthUrl: 'http://127.0.0.1:7101/live' },
    ]);
  });

  it('returns only once the last app answers, naming the ones still starting meanwhile', async () => {
    const api = await healthy();
    const late = await healthy();
    const latePort = late.port;
    await late.close();
    const progress: string[] = [];
    let done = false;
    const waiting = waitUntilHealthy(
      [
        { name: 'api', healthUrl: `http://127.0.0.1:${api.port}/health` },
        { name: 'matcher', healthUrl: `http://127.0.0.1:${latePort}/health` },
      ],
      { progressEveryMs: 300, progress: (line) => progress.push(line) },
    ).then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(done).toBe(false);
    const matcher = await healthy(latePort);
    await waiting;
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.every((line) => /still starting \(\d+ s\): matcher$/.test(line))).toBe(true);
    await Promise.all([api.close(), matcher.close()]);
  });

  it('prints the endpoints a developer needs and the development operator token', () => {
    const summary = formatSummary(stack(3000, 9102, 'tok-123'), 4_200);
    expect(summary).toContain('Matchplane is up: 3 apps healthy in 4.2 s');
    expect(summary).toMatch(/API\s+http:\/\/127\.0\.0\.1:3000\/v1\n/);
    expect(summary).toContain('http://127.0.0.1:3000/v1/openapi.json');
    expect(summary).toContain('ws://127.0.0.1:3000/v1/notifications');
    expect(summary).toContain('http://127.0.0.1:3000/admin');
    expect(summary).toContain('tok-123 (development');
    expect(summary).toContain('udp://127.0.0.1:7201 http://127.0.0.1:7101');
    expect(formatSummary(stack(3000, 9102), 1)).toContain('from OPERATOR_TOKENS (not shown)');
  });

  it('makes the development operator token once (mode 0600) and shows only that one', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'mp-stack-')), '.dev', 'tokens');
    const tokens = devOperatorTokens(file);
    expect(tokens).toMatch(/^dev=[A-Za-z0-9_-]{32}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(devOperatorTokens(file)).toBe(tokens);
    expect(devTokenOf(tokens, file)).toBe(tokens.slice('dev='.length));
    expect(devTokenOf('ops=another-token', file)).toBeUndefined();
    expect(devTokenOf(undefined, file)).toBeUndefined();
  });
});
