import { ErrorCode } from '@matchplane/contracts';
import { CLI_EXIT_CODES, CliExitCode, exitCodeOf } from './cli-exit-codes';
import { CodedError } from './coded.error';
import { ALL_ERROR_CODES, DomainErrorCode, LibraryErrorCode } from './error-codes';

describe('CLI_EXIT_CODES', () => {
  it.each(ALL_ERROR_CODES)('gives %s an exit code that is not success', (code) => {
    expect([CliExitCode.FAILED, CliExitCode.USAGE]).toContain(CLI_EXIT_CODES[code]);
    expect(exitCodeOf(new CodedError(code, 'x'))).toBe(CLI_EXIT_CODES[code]);
  });

  // The exit codes scripts rely on (test/e2e/dlq-cli.spec.ts, test/integration/migrate-cli.spec.ts).
  it.each([
    [LibraryErrorCode.USAGE, CliExitCode.USAGE],
    [ErrorCode.INVALID_CURSOR, CliExitCode.FAILED],
    [ErrorCode.NOT_DEAD_LETTERED, CliExitCode.FAILED],
    [LibraryErrorCode.DATABASE_UNREACHABLE, CliExitCode.FAILED],
    [LibraryErrorCode.INVALID_ROLLBACK, CliExitCode.FAILED],
    [DomainErrorCode.INVALID_ARGUMENT, CliExitCode.FAILED],
  ] as const)('exits %s with %i', (code, exit) => {
    expect(CLI_EXIT_CODES[code]).toBe(exit);
  });

  it('exits FAILED on an error without a code', () => {
    expect(exitCodeOf(new Error('boom'))).toBe(CliExitCode.FAILED);
    expect(exitCodeOf(Object.assign(new Error('pg'), { code: '57P01' }))).toBe(CliExitCode.FAILED);
  });
});
