import { Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { GameServerConfig } from './game-server.config';
import {
  healthEndpointProvider,
  LifecycleLogger,
  LoggingModule,
  MetricsRegistry,
} from '@matchplane/observability';
import { ControlPlaneHealth } from './control-plane.health';
import { GameServerSupervisor } from './game-server.supervisor';

@Module({})
export class GameServerModule {
  static forRoot(config: GameServerConfig): DynamicModule {
    return {
      module: GameServerModule,
      imports: [
        LoggingModule.forRoot(config, 'game-server'),
        TerminusModule.forRoot({ logger: false }),
      ],
      providers: [
        { provide: GameServerConfig, useValue: config },
        { provide: MetricsRegistry, useValue: new MetricsRegistry('game-server') },
        ControlPlaneHealth,
        LifecycleLogger,
        healthEndpointProvider(ControlPlaneHealth, config.HEALTH_HOST, config.HEALTH_PORT),
        GameServerSupervisor,
      ],
    };
  }
}
