import { loadConfigOrExit } from '@matchplane/config';
import { DispatcherConfig } from './dispatcher.config';
import { bootstrapWorker, exitOnBootFailure } from '@matchplane/observability';
import { DispatcherModule } from './dispatcher.module';

const config = loadConfigOrExit(DispatcherConfig, 'dispatcher');
bootstrapWorker(DispatcherModule.forRoot(config), 'dispatcher', config).catch(
  exitOnBootFailure('dispatcher'),
);
