import type { DynamicModule, INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { databaseTarget, type DatabaseConfig } from '@matchplane/config';
import {
  CliExitCode,
  CodedError,
  exitCodeOf,
  exitOnUsageError,
  LibraryErrorCode,
} from '@matchplane/errors';
import { dataSourceOptions, messageOf, sqlStateOf } from '@matchplane/persistence';

/** What an operator CLI's argument parser answers: --help, a command, or what is wrong with it. */
export type ParsedCliArgs<Command> =
  { ok: true; help: true } | ({ ok: true; help: false } & Command) | { ok: false; problem: string };

/**
 * An operator CLI's first step: a wrong command line ends it with the problem and the usage
 * (exit USAGE), --help with the usage (exit OK); otherwise it answers the parsed command.
 */
export function commandOrExit<Command>(
  tool: string,
  usage: string,
  parsed: ParsedCliArgs<Command>,
): Command {
  if (!parsed.ok) exitOnUsageError(tool, parsed.problem, usage);
  if (parsed.help) {
    process.stdout.write(`${usage}\n`);
    process.exit(CliExitCode.OK);
  }
  return parsed;
}

/**
 * Who an audited operator command records as its actor: its --actor, else OPERATOR_NAME; with
 * neither the CLI ends with a usage error.
 */
export function actorOrExit(
  tool: string,
  usage: string,
  operation: { kind: string; actor?: string },
  operatorName: string | undefined,
): string {
  const actor = operation.actor ?? operatorName;
  if (actor === undefined) {
    exitOnUsageError(
      tool,
      `${operation.kind} needs --actor=NAME (or OPERATOR_NAME) for the audit trail`,
      usage,
    );
  }
  return actor;
}

export interface CliOutput {
  line(text: string): void;
  error(text: string): void;
}

/**
 * Runs one operator CLI command in a Nest application context over a DataSource of its own, and
 * resolves with its exit code (libs/errors CLI_EXIT_CODES). One-shot: an unreachable database is
 * reported at once (the caller may retry), not waited for as the long-running apps do.
 */
export async function runCliCommand(
  config: DatabaseConfig,
  applicationName: string,
  rootModule: (dataSource: DataSource) => DynamicModule,
  command: (app: INestApplicationContext) => Promise<string[]>,
  output: CliOutput,
): Promise<number> {
  const target = databaseTarget(config);
  const dataSource = new DataSource(
    dataSourceOptions({ ...config, DATABASE_POOL_SIZE: 2 }, { applicationName }),
  );
  try {
    await dataSource.initialize();
  } catch (error) {
    const unreachable = new CodedError(
      LibraryErrorCode.DATABASE_UNREACHABLE,
      `cannot connect to PostgreSQL at ${target}: ${messageOf(error)}`,
    );
    output.error(unreachable.message);
    return exitCodeOf(unreachable);
  }
  try {
    const app = await NestFactory.createApplicationContext(rootModule(dataSource), {
      logger: false,
      abortOnError: false,
    });
    try {
      for (const line of await command(app)) output.line(line);
      return CliExitCode.OK;
    } finally {
      await app.close();
    }
  } catch (error) {
    output.error(
      error instanceof CodedError ? error.message : `failed on ${target}: ${describe(error)}`,
    );
    return exitCodeOf(error);
  } finally {
    await dataSource.destroy().catch(() => undefined);
  }
}

function describe(error: unknown): string {
  // 42P01 undefined_table: most likely a database the migrations never ran on.
  const hint =
    sqlStateOf(error) === '42P01' ? ' (are the migrations applied? npm run migrate)' : '';
  return `${messageOf(error)}${hint}`;
}

/**
 * An operator CLI's last step: runs `command` (as {@link runCliCommand}), printing its lines on
 * stdout and `<tool>: <problem>` on stderr, and sets the process's exit code.
 */
export function runOperatorCli(
  tool: string,
  config: DatabaseConfig,
  rootModule: (dataSource: DataSource) => DynamicModule,
  command: (app: INestApplicationContext) => Promise<string[]>,
): void {
  runCliCommand(config, `matchplane-${tool}`, rootModule, command, {
    line: (line) => process.stdout.write(`${line}\n`),
    error: (line) => process.stderr.write(`${tool}: ${line}\n`),
  }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${tool}: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = exitCodeOf(error);
    },
  );
}
