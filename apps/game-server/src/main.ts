import { GameServerConfig, loadConfigOrExit } from '@matchplane/config';
import { bootstrapWorker, exitOnBootFailure } from '@matchplane/observability';
import { GameServerModule } from './game-server.module';

const config = loadConfigOrExit(GameServerConfig, 'game-server');
bootstrapWorker(GameServerModule.forRoot(config), 'game-server', config).catch(exitOnBootFailure('game-server'));
