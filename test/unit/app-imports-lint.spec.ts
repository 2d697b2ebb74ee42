import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const ESLINT = join(ROOT, 'node_modules', '.bin', 'eslint');

/**
 * The lint rule that keeps each app to libs and itself (eslint.config.mjs), run as `npm run lint`
 * runs it (the CLI: its ESM config cannot load inside Jest's module system).
 */
function restrictedImports(filePath: string, code: string): string[] {
  const run = spawnSync(ESLINT, ['--format', 'json', '--stdin', '--stdin-filename', filePath], {
    cwd: ROOT,
    input: code,
    encoding: 'utf8',
  });
  const [result] = JSON.parse(run.stdout) as { messages: { ruleId: string; message: string }[] }[];
  return (result?.messages ?? [])
    .filter((message) => message.ruleId === 'import-x/no-restricted-paths')
    .map((message) => message.message);
}

describe('lint: no app imports another', () => {
  const fromApi = `import { ApiConfig } from '../../api/src/api.config';\nexport const config = ApiConfig;\n`;

  it("refuses an app's import of another app's folder", () => {
    expect(restrictedImports('apps/maintenance/src/main.ts', fromApi)).toEqual([
      expect.stringContaining('An app imports only libs and itself'),
    ]);
  });

  it('lets an app import libs and its own files, and the demo drive the others', () => {
    const own = `import { MaintenanceConfig } from './maintenance.config';\nimport { ErrorCode } from '@matchplane/contracts';\nexport const used = [MaintenanceConfig, ErrorCode];\n`;
    expect(restrictedImports('apps/maintenance/src/main.ts', own)).toEqual([]);
    expect(restrictedImports('apps/demo/src/demo.main.ts', fromApi)).toEqual([]);
  });
});
