import { DispatcherConfig, loadConfigOrExit } from '@matchplane/config';
import { bootstrapWorker, exitOnBootFailure } from '@matchplane/observability';
import { DispatcherModule } from './dispatcher.module';

const config = loadConfigOrExit(DispatcherConfig, 'dispatcher');
bootstrapWorker(DispatcherModule.forRoot(config), 'dispatcher', config).catch(exitOnBootFailure('dispatcher'));
