import { execFileSync } from 'node:child_process';
import path from 'node:path';
import globalSetup from './global-setup';

/** e2e suites run the apps as processes from dist/, so the build must be current. */
export default async function e2eGlobalSetup(): Promise<void> {
  await globalSetup();
  if (process.env.MATCHPLANE_E2E_BUILT === '1') return;
  execFileSync('npm', ['run', '--silent', 'build'], {
    cwd: path.resolve(__dirname, '../..'),
    stdio: 'inherit',
  });
  process.env.MATCHPLANE_E2E_BUILT = '1';
}
