import { loadConfigOrExit } from '@matchplane/config';
import { bootstrapWorker, exitOnBootFailure } from '@matchplane/observability';
import { MatcherConfig } from './matcher.config';
import { MatcherModule } from './matcher.module';

const config = loadConfigOrExit(MatcherConfig, 'matcher');
bootstrapWorker(MatcherModule.forRoot(config), 'matcher', config).catch(
  exitOnBootFailure('matcher'),
);
