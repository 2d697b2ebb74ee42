import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import Redis from 'ioredis';

@Injectable()
export class RedisHealthIndicator {
  constructor(
    @Inject(Redis) private readonly redis: Redis,
    private readonly indicators: HealthIndicatorService,
  ) {}

  async ping(key = 'redis', timeoutMs = 1_000): Promise<HealthIndicatorResult> {
    const session = this.indicators.check(key);
    if (this.redis.status !== 'ready')
      return session.down({ message: `connection ${this.redis.status}` });
    try {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no PONG within ${timeoutMs} ms`)), timeoutMs);
      });
      await Promise.race([this.redis.ping(), timeout]).finally(() => clearTimeout(timer));
      return session.up();
    } catch (error) {
      return session.down({ message: (error as Error).message });
    }
  }
}
