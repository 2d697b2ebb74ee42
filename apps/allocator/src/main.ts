import { loadConfigOrExit } from '@matchplane/config';
import { AllocatorConfig } from './allocator.config';
import { bootstrapWorker, exitOnBootFailure } from '@matchplane/observability';
import { AllocatorModule } from './allocator.module';

const config = loadConfigOrExit(AllocatorConfig, 'allocator');
// Inside the chain, so missing key material is the one-line failure of exitOnBootFailure.
Promise.resolve()
  .then(() => bootstrapWorker(AllocatorModule.forRoot(config), 'allocator', config))
  .catch(exitOnBootFailure('allocator'));
