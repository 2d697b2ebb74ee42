import { Module } from '@nestjs/common';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { ApiConfig } from '../api.config';
import { redisTransportOptions } from '@matchplane/persistence';
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
        useFactory: (config: ApiConfig) => ({
          transport: Transport.REDIS,
          options: redisTransportOptions(
            config,
            `${config.REDIS_KEY_PREFIX}:api-session-revocations`,
          ),
        }),
      },
    ]),
  ],
  providers: [SessionRevocationPublisher],
  exports: [SessionRevocationPublisher],
})
export class SessionRevocationsModule {}
