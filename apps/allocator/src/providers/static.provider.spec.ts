import type { DataSource, EntityManager } from 'typeorm';
import { loadConfig } from '@matchplane/config';
import { AllocatorConfig } from '../allocator.config';
import type { AllocationStore } from '@matchplane/allocation';
import { NoCapacityError } from './allocation.provider';
import { StaticProvider } from './static.provider';
import type { StaticHandOff } from './static-handoff';

/** The live-server lookup StaticProvider asks of AllocationStore, over a fixed set of live ids. */
class LiveServers {
  readonly asked: string[][] = [];
  constructor(readonly live: Set<string>) {}

  readonly store = {
    liveServerIds: (_manager: EntityManager, ids: readonly string[]) => {
      this.asked.push([...ids]);
      return Promise.resolve(new Set(ids.filter((id) => this.live.has(id))));
    },
  } as unknown as AllocationStore;
}

function provider(size: number, servers: LiveServers): StaticProvider {
  const config = loadConfig(AllocatorConfig, {
    JOIN_KEYS_FILE: '/unused',
    ALLOCATION_PROVIDER: 'static',
    STATIC_SERVERS: Array.from({ length: size }, (_, i) => `gs-${i}=10.0.0.${i}:7777`).join(','),
    STATIC_HANDOFF_URL: 'http://{host}:{port}/handoff',
  });
  return new StaticProvider(
    config,
    { manager: {} } as DataSource,
    servers.store,
    {} as StaticHandOff,
  );
}

const REQUEST = { matchId: '00000000-0000-4000-8000-000000000001', mode: 'duel', region: 'eu' };

describe(StaticProvider.name, () => {
  it('looks up only the next 16 servers from its round-robin start while one of them is free', async () => {
    const servers = new LiveServers(new Set(['gs-0', 'gs-1']));
    const pool = provider(500, servers);
    expect((await pool.allocate(REQUEST, new Set())).serverId).toBe('gs-2');
    // The next allocation starts one further round: gs-1 is live, gs-2 is free here.
    expect((await pool.allocate(REQUEST, new Set(['gs-2']))).serverId).toBe('gs-3');
    expect(servers.asked.map((ids) => ids.length)).toEqual([16, 16]);
    expect(servers.asked[1]?.slice(0, 2)).toEqual(['gs-1', 'gs-3']);
  });

  it('looks up the whole pool when the next 16 are all taken, and finds the last free server', async () => {
    const live = new Set(Array.from({ length: 40 }, (_, i) => `gs-${i}`));
    live.delete('gs-37');
    const servers = new LiveServers(live);
    expect((await provider(40, servers).allocate(REQUEST, new Set())).serverId).toBe('gs-37');
    expect(servers.asked.map((ids) => ids.length)).toEqual([16, 40]);
  });

  it('waits (NoCapacityError) when every server is taken or found busy', async () => {
    const servers = new LiveServers(new Set(['gs-0', 'gs-1']));
    await expect(provider(3, servers).allocate(REQUEST, new Set(['gs-2']))).rejects.toBeInstanceOf(
      NoCapacityError,
    );
    expect(servers.asked).toEqual([['gs-0', 'gs-1']]);
  });
});
