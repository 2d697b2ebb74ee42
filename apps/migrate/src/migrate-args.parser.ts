export type MigrateCommand =
  { kind: 'apply' } | { kind: 'status' } | { kind: 'rollback'; count: number } | { kind: 'help' };

export type ParsedMigrateArgs =
  { ok: true; command: MigrateCommand } | { ok: false; problem: string };

export const MIGRATE_USAGE = `usage: migrate [--status | --rollback=N | --help]
  (no flag)     apply every pending migration, creating DATABASE_NAME first if it is missing
  --status      list applied and pending migrations
  --rollback=N  reverse the N most recently applied migrations, newest first
  --help        print this text
Connection settings come from DATABASE_* environment variables.`;

/** At most one flag; anything else is a usage error (exit 2), decided before any configuration is read. */
export function parseMigrateArgs(argv: readonly string[]): ParsedMigrateArgs {
  if (argv.length > 1)
    return {
      ok: false,
      problem: `expected at most one flag, got ${argv.length}: ${argv.join(' ')}`,
    };
  const [flag] = argv;
  if (flag === undefined) return { ok: true, command: { kind: 'apply' } };
  if (flag === '--status') return { ok: true, command: { kind: 'status' } };
  if (flag === '--help' || flag === '-h') return { ok: true, command: { kind: 'help' } };
  if (flag === '--rollback' || flag.startsWith('--rollback=')) {
    const value = flag.slice('--rollback='.length);
    const count = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(count) || count < 1) {
      return {
        ok: false,
        problem: `--rollback needs a positive whole number of migrations, as in --rollback=1 (got "${flag}")`,
      };
    }
    return { ok: true, command: { kind: 'rollback', count } };
  }
  return { ok: false, problem: `unknown argument "${flag}"` };
}
