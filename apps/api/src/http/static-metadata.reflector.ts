import { Reflector } from '@nestjs/core';

/** A handler and its class, as the guards pass them. */
type Targets = Parameters<Reflector['getAllAndOverride']>[1];

/** One level of the cache: the answers for the targets so far, and the next target's level. */
interface Level {
  readonly next: WeakMap<object, Level>;
  readonly answers: Map<unknown, unknown>;
}

function newLevel(): Level {
  return { next: new WeakMap(), answers: new Map() };
}

/**
 * A Reflector that reads each (key, handler, class) once. Route metadata is set by decorators as
 * the classes load and never changes after, but the throttler guard read it on every request (for
 * each of its limits, five keys on the handler and its class): 2 % of the API's CPU under
 * heartbeats, through reflect-metadata's prototype walks.
 */
export class StaticMetadataReflector extends Reflector {
  private readonly overrides = newLevel();
  private readonly merges = newLevel();

  override getAllAndOverride(key: unknown, targets: Targets): never {
    return this.remembered(this.overrides, key, targets, () =>
      super.getAllAndOverride(key, targets),
    ) as never;
  }

  override getAllAndMerge(key: unknown, targets: Targets): never {
    return this.remembered(this.merges, key, targets, () =>
      super.getAllAndMerge(key, targets),
    ) as never;
  }

  private remembered(root: Level, key: unknown, targets: Targets, read: () => unknown): unknown {
    let level = root;
    for (const target of targets) {
      let next = level.next.get(target);
      if (!next) {
        next = newLevel();
        level.next.set(target, next);
      }
      level = next;
    }
    if (level.answers.has(key)) return level.answers.get(key);
    const answer = read();
    level.answers.set(key, answer);
    return answer;
  }
}
