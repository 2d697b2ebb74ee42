import { AllocatorConfig, loadConfigOrExit } from '@matchplane/config';
import { bootstrapWorker, exitOnBootFailure } from '@matchplane/observability';
import { AllocatorModule } from './allocator.module';

const config = loadConfigOrExit(AllocatorConfig, 'allocator');
bootstrapWorker(AllocatorModule.forRoot(config), 'allocator', config).catch(exitOnBootFailure('allocator'));
