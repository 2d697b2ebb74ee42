import { CodedError } from './coded.error';
import { ALL_ERROR_CODES, LibraryErrorCode, type AnyErrorCode } from './error-codes';

/**
 * Exit codes of the command-line tools (npm run dlq, candidates, migrate; the allocator's
 * dev-keys): 0 done; 1 the command ran and failed (refused by the data, a dependency down, bad
 * configuration), its one stderr line says why; 2 the command line itself is wrong (nothing was
 * read or written).
 */
export const CliExitCode = { OK: 0, FAILED: 1, USAGE: 2 } as const;
export type CliExitCode = (typeof CliExitCode)[keyof typeof CliExitCode];

/** Codes whose exit code is not FAILED. */
const EXCEPTIONS: Partial<Record<AnyErrorCode, CliExitCode>> = {
  [LibraryErrorCode.USAGE]: CliExitCode.USAGE,
};

/** The one table from error code to exit code, covering every code. */
export const CLI_EXIT_CODES: Readonly<Record<AnyErrorCode, CliExitCode>> = Object.freeze(
  Object.fromEntries(
    ALL_ERROR_CODES.map((code) => [code, EXCEPTIONS[code] ?? CliExitCode.FAILED]),
  ) as Record<AnyErrorCode, CliExitCode>,
);

/** The exit code of a command that failed with `error` (any error that is not coded is FAILED). */
export function exitCodeOf(error: unknown): CliExitCode {
  // `instanceof` on the generic class types the code `any`.
  return error instanceof CodedError
    ? CLI_EXIT_CODES[(error as CodedError).code]
    : CliExitCode.FAILED;
}

/**
 * A command-line tool's last step: the process exits with the code `command` resolves to, or,
 * when it rejects, with the error's code after `<tool>: <stack>` on stderr.
 */
export function settleExitCode(tool: string, command: Promise<number>): void {
  command.then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(
        `${tool}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exitCode = exitCodeOf(error);
    },
  );
}

/**
 * Ends a command-line tool whose command line is wrong, before it read or wrote anything:
 * `<tool>: <problem>` and the usage on stderr, the table's exit code for USAGE.
 */
export function exitOnUsageError(tool: string, problem: string, usage: string): never {
  process.stderr.write(`${tool}: ${problem}\n${usage}\n`);
  process.exit(exitCodeOf(new CodedError(LibraryErrorCode.USAGE, problem)));
}
