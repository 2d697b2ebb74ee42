import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AllocatorConfig } from '../allocator.config';
import { LocalProvider } from './local.provider';

/** The OS's choices of free ports, steered: the next ones handed out are `queued`. */
class SteeredPorts extends LocalProvider {
  readonly queued: number[] = [];

  protected override freePort(host: string): Promise<number> {
    const next = this.queued.shift();
    return next === undefined ? super.freePort(host) : Promise.resolve(next);
  }
}

describe(LocalProvider.name, () => {
  let scratch: string;
  let provider: SteeredPorts;

  beforeEach(() => {
    scratch = mkdtempSync(path.join(tmpdir(), 'local-provider-'));
    const entry = path.join(scratch, 'server.js');
    writeFileSync(entry, 'setTimeout(() => undefined, 60_000);\n');
    provider = new SteeredPorts(
      Object.assign(new AllocatorConfig(), {
        LOCAL_SERVER_ENTRY: entry,
        LOCAL_SERVER_OUTPUT: 'ignore',
        JOIN_KEYS_FILE: path.join(scratch, 'keys.json'),
      }),
    );
  });

  afterEach(() => {
    provider.onApplicationShutdown();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("never gives the server's health endpoint the players' port, even when the OS hands it back", async () => {
    const server = await provider.allocate({ matchId: 'm-1', mode: 'duel', region: 'eu-west' });
    const playersPort = Number(server.providerRef.port);
    // Chosen at allocation and released until the server binds it: the OS may hand it out again
    // (seen in the chaos run, the server then exiting on EADDRINUSE and its match waiting for the
    // allocation timeout).
    provider.queued.push(playersPort);
    const handedOff = await provider.handOff({
      allocation: { ...server, matchId: 'm-1', provider: 'local', state: 'ALLOCATED' },
      credential: 'credential',
      apiUrl: 'http://127.0.0.1:1',
    });
    expect(handedOff.healthPort).toEqual(expect.any(Number));
    expect(handedOff.healthPort).not.toBe(playersPort);
  });
});
