import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** One `--name=value` (or bare `--name` for a switch) flag of a bench. */
export interface FlagSpec {
  name: string;
  description: string;
  /** Integer flags: inclusive bounds; a switch has neither. */
  int?: { min: number; max: number; default: number };
  string?: { default: string };
  switch?: true;
}

export type FlagValues = Record<string, number | string | boolean>;

export class UsageError extends Error {
  override name = 'UsageError';
}

/** Parses argv against `specs`; any unknown, repeated or malformed flag is a {@link UsageError}. */
export function parseFlags(argv: readonly string[], specs: readonly FlagSpec[]): FlagValues {
  const values: FlagValues = {};
  for (const spec of specs) {
    values[spec.name] = spec.int?.default ?? spec.string?.default ?? false;
  }
  const seen = new Set<string>();
  for (const arg of argv) {
    const match = /^--([a-z][a-z-]*)(?:=(.*))?$/s.exec(arg);
    const spec = match && specs.find((candidate) => candidate.name === match[1]);
    if (!match || !spec) throw new UsageError(`unknown argument ${JSON.stringify(arg)}`);
    if (seen.has(spec.name)) throw new UsageError(`--${spec.name} given twice`);
    seen.add(spec.name);
    const raw = match[2];
    if (spec.switch) {
      if (raw !== undefined) throw new UsageError(`--${spec.name} takes no value`);
      values[spec.name] = true;
    } else if (raw === undefined || raw === '') {
      throw new UsageError(`--${spec.name} needs a value (--${spec.name}=...)`);
    } else if (spec.int) {
      const value = /^[0-9]+$/.test(raw) ? Number(raw) : Number.NaN;
      if (!Number.isSafeInteger(value) || value < spec.int.min || value > spec.int.max) {
        throw new UsageError(
          `--${spec.name} must be an integer from ${spec.int.min} to ${spec.int.max}, got ${JSON.stringify(raw)}`,
        );
      }
      values[spec.name] = value;
    } else {
      values[spec.name] = raw;
    }
  }
  return values;
}

/** `K=V[,K=V...]` of an `--*-env` flag: extra environment for a bench's child processes. */
export function envPairs(flag: string, text: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const pair of text.split(',').filter((item) => item !== '')) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/s.exec(pair);
    if (!match?.[1]) throw new UsageError(`--${flag}: ${JSON.stringify(pair)} is not KEY=VALUE`);
    pairs[match[1]] = match[2] ?? '';
  }
  return pairs;
}

export function usage(command: string, summary: string, specs: readonly FlagSpec[]): string {
  const lines = specs.map((spec) => {
    const shape = spec.switch ? `--${spec.name}` : `--${spec.name}=${spec.int ? 'N' : 'VALUE'}`;
    const fallback = spec.int
      ? ` (default ${spec.int.default}, ${spec.int.min}-${spec.int.max})`
      : spec.string
        ? ` (default ${spec.string.default})`
        : '';
    return `  ${shape.padEnd(28)} ${spec.description}${fallback}`;
  });
  return `usage: ${command} [flags]\n${summary}\n\n${lines.join('\n')}\n`;
}

/** Writes a bench's figures (pretty JSON) to `file`, relative to the repository root. */
export function writeResults(repoRoot: string, file: string, result: unknown): string {
  const target = path.resolve(repoRoot, file);
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, `${JSON.stringify(result, null, 2)}\n`);
  return path.relative(repoRoot, target);
}
