import { ConfigError, loadConfigOrExit } from '@matchplane/config';
import { MaintenanceConfig } from './maintenance.config';
import { bootstrapWorker, exitOnBootFailure } from '@matchplane/observability';
import { MaintenanceModule } from './maintenance.module';
import { retentionWindowProblems } from './retention/retention-policy';

const config = loadConfigOrExit(MaintenanceConfig, 'maintenance');
// Checks across variables fail like a bad variable does: one line, exit 1.
const problems = retentionWindowProblems(config);
if (problems.length > 0) {
  process.stderr.write(`maintenance: ${new ConfigError(problems).message}\n`);
  process.exit(1);
}
bootstrapWorker(MaintenanceModule.forRoot(config), 'maintenance', config).catch(
  exitOnBootFailure('maintenance'),
);
