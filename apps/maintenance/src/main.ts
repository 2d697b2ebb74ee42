import { loadConfigOrExit } from '@matchplane/config';
import { bootstrapWorker, exitOnBootFailure } from '@matchplane/observability';
import { MaintenanceConfig } from './maintenance.config';
import { MaintenanceModule } from './maintenance.module';

const config = loadConfigOrExit(MaintenanceConfig, 'maintenance');
bootstrapWorker(MaintenanceModule.forRoot(config), 'maintenance', config).catch(
  exitOnBootFailure('maintenance'),
);
