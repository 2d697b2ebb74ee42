import { startDelayProxy } from './delay-proxy';

/*
 * Delaying proxies as their own process: `node delay-proxy.main.js <targetHost>:<targetPort>
 * <addedRttMs> [<targetHost>:<targetPort> <addedRttMs> ...]` opens one loopback proxy per pair,
 * prints {"port": first, "ports": [every one, in order]} once all listen, and runs until killed.
 * Outside the test's, bench's or demo's own process, so their event loops (JSON, assertions, a
 * client) do not hold its timers; one process serves every pair, so their pumps share one loop.
 */
const USAGE =
  'usage: delay-proxy.main.js <targetHost>:<targetPort> <addedRttMs> [<targetHost>:<targetPort> <addedRttMs> ...]';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.length === 0 || args.length % 2 !== 0) throw new Error(USAGE);
  const ports: number[] = [];
  for (let i = 0; i < args.length; i += 2) {
    const match = /^(.+):(\d+)$/.exec(args[i]!);
    const addedRttMs = Number(args[i + 1]);
    if (!match || !Number.isFinite(addedRttMs) || addedRttMs < 0) throw new Error(USAGE);
    const proxy = await startDelayProxy({
      targetHost: match[1],
      targetPort: Number(match[2]),
      addedRttMs,
    });
    ports.push(proxy.port);
  }
  process.stdout.write(`${JSON.stringify({ port: ports[0], ports })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`delay-proxy: ${(error as Error).message}\n`);
  process.exit(1);
});
