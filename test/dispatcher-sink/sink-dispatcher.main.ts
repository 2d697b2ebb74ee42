import { loadConfigOrExit } from '@matchplane/config';
import { bootstrapWorker, exitOnBootFailure } from '@matchplane/observability';
import { DispatcherConfig } from '../../apps/dispatcher/src/dispatcher.config';
import { DispatcherModule } from '../../apps/dispatcher/src/dispatcher.module';
import { DeliverySinkModule } from './delivery-sink.module';

/** The real dispatcher, booted as apps/dispatcher/src/main.ts boots it, plus the delivery sink. */
const config = loadConfigOrExit(DispatcherConfig, 'dispatcher');
bootstrapWorker(
  DispatcherModule.forRoot(config, [DeliverySinkModule.forRoot(config)]),
  'dispatcher',
  config,
).catch(exitOnBootFailure('dispatcher'));
