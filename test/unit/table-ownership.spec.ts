import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { TABLE_OWNERS, type OwnedTable } from '@matchplane/persistence';

const ROOT = join(__dirname, '..', '..');

/** Production sources: every .ts file under apps/ and libs/ but specs (migrations own the schema). */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Comments name tables in prose ("deleted from matches"); only code counts. */
function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

const TABLES = new Set<string>(Object.keys(TABLE_OWNERS));
/** SQL keywords are upper case throughout the code base; a table follows one of these. */
const TABLE_REFERENCE =
  /\b(?:FROM|JOIN|INTO|UPDATE|TABLE|REFERENCES)\s+(?:ONLY\s+)?([a-z_][a-z0-9_]*)\b/g;

/** Each table a source file's SQL names that the file's module does not own. */
function violationsIn(path: string, source: string): string[] {
  const named = new Set<string>();
  for (const match of withoutComments(source).matchAll(TABLE_REFERENCE)) {
    const table = match[1];
    if (table !== undefined && TABLES.has(table)) named.add(table);
  }
  return [...named]
    .map((table) => [table, TABLE_OWNERS[table as OwnedTable]] as const)
    .filter(([, owner]) => !path.startsWith(`${owner}/`))
    .map(([table, owner]) => `${path} names ${table} (owned by ${owner})`);
}

function ownershipViolations(files: readonly string[]): string[] {
  return files
    .flatMap((file) => violationsIn(relative(ROOT, file), readFileSync(file, 'utf8')))
    .sort();
}

describe('table ownership', () => {
  const files = [...sourceFiles(join(ROOT, 'apps')), ...sourceFiles(join(ROOT, 'libs'))];

  it('every statement names only tables its own module owns', () => {
    expect(ownershipViolations(files)).toEqual([]);
  });

  it('every table the migrations create has an owner', () => {
    const created = sourceFiles(join(ROOT, 'migrations')).flatMap((file) =>
      [
        ...readFileSync(file, 'utf8').matchAll(
          /CREATE TABLE (?:IF NOT EXISTS )?([a-z_][a-z0-9_]*)/g,
        ),
      ].map((match) => match[1]),
    );
    expect(created.length).toBeGreaterThan(0);
    expect(created.filter((table) => table !== undefined && !TABLES.has(table))).toEqual([]);
  });

  it('finds a statement naming another module’s table, and not one in a comment', () => {
    const source = `// rows deleted FROM matches go with it
      const sql = \`SELECT t.id FROM queue_tickets t
        JOIN match_participants p ON p.ticket_id = t.id\`;`;
    expect(violationsIn('libs/tickets/src/ticket.store.ts', source)).toEqual([
      'libs/tickets/src/ticket.store.ts names match_participants (owned by libs/matches)',
    ]);
    expect(violationsIn('libs/matches/src/match.store.ts', source)).toEqual([
      'libs/matches/src/match.store.ts names queue_tickets (owned by libs/tickets)',
    ]);
  });
});
