import { ConfigError, loadConfigOrExit } from '@matchplane/config';
import { MatcherConfig } from './matcher.config';
import { bootstrapWorker, exitOnBootFailure } from '@matchplane/observability';
import { MatcherModule } from './matcher.module';
import { matcherRulesProblems } from './matcher-rules';

const config = loadConfigOrExit(MatcherConfig, 'matcher');
// Checks across variables fail like a bad variable does: one line, exit 1.
const problems = matcherRulesProblems(config);
if (problems.length > 0) {
  process.stderr.write(`matcher: ${new ConfigError(problems).message}\n`);
  process.exit(1);
}
bootstrapWorker(MatcherModule.forRoot(config), 'matcher', config).catch(
  exitOnBootFailure('matcher'),
);
