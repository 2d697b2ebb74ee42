import {
  Inject,
  Logger,
  Module,
  type DynamicModule,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { GameServerConfig } from '@matchplane/config';
import { HealthListener, LoggingModule, MetricsRegistry } from '@matchplane/observability';
import { ControlPlaneHealth } from './control-plane.health';

class GameServerHealthListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Health');
  private readonly listener: HealthListener;

  constructor(
    health: ControlPlaneHealth,
    @Inject(MetricsRegistry) metrics: MetricsRegistry,
    @Inject(GameServerConfig) private readonly config: GameServerConfig,
  ) {
    this.listener = new HealthListener(() => health.check(), metrics);
  }

  async onApplicationBootstrap(): Promise<void> {
    const address = await this.listener.listen(this.config.HEALTH_HOST, this.config.HEALTH_PORT);
    this.logger.log(`health and metrics on http://${address.address}:${address.port}/health`);
  }

  onApplicationShutdown(): Promise<void> {
    return this.listener.close();
  }
}

@Module({})
export class GameServerModule {
  static forRoot(config: GameServerConfig): DynamicModule {
    return {
      module: GameServerModule,
      imports: [LoggingModule.forRoot(config, 'game-server'), TerminusModule.forRoot({ logger: false })],
      providers: [
        { provide: GameServerConfig, useValue: config },
        { provide: MetricsRegistry, useValue: new MetricsRegistry('game-server') },
        ControlPlaneHealth,
        GameServerHealthListener,
      ],
    };
  }
}
