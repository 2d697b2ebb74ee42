import { startDelayProxy } from './delay-proxy';

/*
 * A delaying proxy as its own process: `node delay-proxy.main.js <targetHost>:<targetPort>
 * <addedRttMs>` prints {"port": n} once listening and runs until killed. Outside the test's or
 * bench's own process, so their event loops (JSON, assertions, a client) do not hold its timers.
 */
async function main(): Promise<void> {
  const [target, rtt] = process.argv.slice(2);
  const match = /^(.+):(\d+)$/.exec(target ?? '');
  const addedRttMs = Number(rtt);
  if (!match || !Number.isFinite(addedRttMs) || addedRttMs < 0) {
    throw new Error('usage: delay-proxy.main.js <targetHost>:<targetPort> <addedRttMs>');
  }
  const proxy = await startDelayProxy({
    targetHost: match[1],
    targetPort: Number(match[2]),
    addedRttMs,
  });
  process.stdout.write(`${JSON.stringify({ port: proxy.port })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`delay-proxy: ${(error as Error).message}\n`);
  process.exit(1);
});
