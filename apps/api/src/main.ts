import { loadConfigOrExit } from '@matchplane/config';
import { ApiConfig } from './api.config';
import { exitOnBootFailure } from '@matchplane/observability';
import { ApiModule } from './api.module';
import { serveApi } from './http/serve-api';

const config = loadConfigOrExit(ApiConfig, 'api');
serveApi(() => ApiModule.forRoot(config), config).catch(exitOnBootFailure('api'));
