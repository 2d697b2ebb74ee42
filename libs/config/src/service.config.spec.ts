import { loadConfig } from './load-config';
import { RedisKeyspace, ServiceConfig, TicketHeartbeatTimeout } from './service.config';

describe('narrow options', () => {
  const config = loadConfig(ServiceConfig, {
    REDIS_KEY_PREFIX: 'mp_eu',
    REDIS_PASSWORD: 'hunter22',
    TICKET_HEARTBEAT_TIMEOUT_MS: '45000',
  });

  it('hold only the variables they name, frozen, never the rest of the config', () => {
    const keyspace = RedisKeyspace.of(config);
    expect(keyspace).toEqual({ REDIS_KEY_PREFIX: 'mp_eu' });
    expect(Object.isFrozen(keyspace)).toBe(true);
    expect(TicketHeartbeatTimeout.of(config)).toEqual({ TICKET_HEARTBEAT_TIMEOUT_MS: 45_000 });
    expect(JSON.stringify(keyspace)).not.toContain('hunter22');
  });
});
