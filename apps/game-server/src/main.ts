import { loadConfigOrExit } from '@matchplane/config';
import { GameServerConfig } from './game-server.config';
import { bootstrapWorker, exitOnBootFailure } from '@matchplane/observability';
import { GameServerModule } from './game-server.module';
import { GameServerSupervisor } from './game-server.supervisor';

const config = loadConfigOrExit(GameServerConfig, 'game-server');
bootstrapWorker(GameServerModule.forRoot(config), 'game-server', config)
  .then(async (app) => {
    const code = await app.get(GameServerSupervisor).finished;
    if (code === undefined) return; // a shutdown signal ended the run; Nest exits with that signal
    await app.close();
    process.exit(code);
  })
  .catch(exitOnBootFailure('game-server'));
