import { Module } from '@nestjs/common';
import { ClientsModule } from '@nestjs/microservices';
import { ApiConfig } from '../api.config';
import { redisTransportClient } from '@matchplane/persistence';
import {
  SESSION_REVOCATIONS_CLIENT,
  SessionRevocationPublisher,
} from './session-revocation.publisher';

/** The publishing end of session revocations (the notification fan-out listener receives them). */
@Module({
  imports: [
    ClientsModule.registerAsync([
      {
        name: SESSION_REVOCATIONS_CLIENT,
        inject: [ApiConfig],
        useFactory: (config: ApiConfig) =>
          redisTransportClient(config, `${config.REDIS_KEY_PREFIX}:api-session-revocations`),
      },
    ]),
  ],
  providers: [SessionRevocationPublisher],
  exports: [SessionRevocationPublisher],
})
export class SessionRevocationsModule {}
