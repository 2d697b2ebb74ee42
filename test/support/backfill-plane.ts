import type { INestApplicationContext } from '@nestjs/common';
import type { MatcherLoop } from '../../apps/matcher/src/matcher.loop';
import {
  CapturingHandOff,
  KeyFiles,
  startDispatcherFor,
  startStaticAllocator,
  type InProcessAllocator,
} from './allocation-harness';
import { startInProcessMatcher } from './in-process-matcher';
import type { InProcessDispatcher } from './outbox-fixtures';
import { startPlayerApi, type PlayerApi } from './player-api';

/** What a backfill test drives in process: the API, the dispatcher, a static allocator, the matcher. */
export interface BackfillPlane {
  readonly api: PlayerApi;
  readonly keys: KeyFiles;
  readonly handOff: CapturingHandOff;
  readonly dispatcher: InProcessDispatcher;
  readonly allocator: InProcessAllocator;
  readonly matcher: { context: INestApplicationContext; loop: MatcherLoop };
  close(): Promise<void>;
}

/** Starts the plane under `env` (the API's and the matcher's), with `servers` static game servers. */
export async function startBackfillPlane(
  env: Record<string, string>,
  servers: { servers: number; firstPort: number },
): Promise<BackfillPlane> {
  const keys = new KeyFiles();
  const handOff = new CapturingHandOff();
  const api = await startPlayerApi(env);
  const dispatcher = await startDispatcherFor(api);
  const allocator = await startStaticAllocator(api, keys, handOff, servers);
  const matcher = await startInProcessMatcher(api, env);
  return {
    api,
    keys,
    handOff,
    dispatcher,
    allocator,
    matcher,
    async close() {
      await matcher.context.close();
      await allocator.close();
      await dispatcher.close();
      await api.close();
      keys.remove();
    },
  };
}
