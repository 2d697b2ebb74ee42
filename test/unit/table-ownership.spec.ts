import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  READ_MODELS,
  TABLE_OWNERS,
  type OwnedTable,
  type ReadModel,
} from '@matchplane/persistence';
import { ALLOCATING_MATCH_RULE } from '@matchplane/allocation';
import { SILENT_SERVER_MATCH_SQL, STUCK_MATCH_RULES, stuckMatchRuleSql } from '@matchplane/matches';
import { retentionPolicies } from '../support/retention-policies';

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
const VIEWS = new Set<string>(Object.keys(READ_MODELS));
/** SQL keywords are upper case throughout the code base; a table follows one of these. */
const TABLE_REFERENCE =
  /\b(FROM|JOIN|INTO|UPDATE|TABLE|REFERENCES)\s+(?:ONLY\s+)?([a-z_][a-z0-9_]*)\b/g;
/** A view is read, never written. */
const READS = new Set(['FROM', 'JOIN']);

/** Every owner module, longest first, so a folder inside a lib or app resolves to its owner. */
const OWNER_MODULES = [
  ...new Set<string>([
    ...Object.values(TABLE_OWNERS),
    ...Object.values(READ_MODELS).map((model) => model.owner),
  ]),
].sort((a, b) => b.length - a.length);

/** The module a source file belongs to: its owner's folder, else its lib or app. */
function moduleOf(path: string): string {
  return (
    OWNER_MODULES.find((owner) => path.startsWith(`${owner}/`)) ??
    path.split('/').slice(0, 2).join('/')
  );
}

/** Each table or view a module's SQL names that the module may not name that way. */
function sqlViolations(path: string, sql: string): string[] {
  const module = moduleOf(path);
  const found = new Set<string>();
  for (const [, keyword = '', name = ''] of withoutComments(sql).matchAll(TABLE_REFERENCE)) {
    if (TABLES.has(name)) {
      const owner = TABLE_OWNERS[name as OwnedTable];
      if (owner !== module) found.add(`${path} names ${name} (owned by ${owner})`);
    } else if (VIEWS.has(name)) {
      const { owner, readers } = READ_MODELS[name as ReadModel];
      if (owner === module) continue;
      if (!(readers as readonly string[]).includes(module)) {
        found.add(`${path} reads view ${name} (owned by ${owner}, not listed as a reader)`);
      } else if (!READS.has(keyword)) {
        found.add(`${path} writes view ${name} (owned by ${owner}; readers only read it)`);
      }
    }
  }
  return [...found];
}

/**
 * The SQL fragments a file exports: each top-level `export const`/`export function` whose text
 * names a table or a view, for another statement to embed. One that runs its own statement (an
 * owner's read in function form, e.g. the outbox's `retainedEvents`) is not one, nor is a store
 * class: calling them is how other modules read.
 */
function fragmentsIn(source: string): string[] {
  const chunks = withoutComments(source).split(
    /^(?=(?:export|import|const|let|function|async|class|abstract|interface|type|enum|declare|@)\b)/m,
  );
  return chunks.flatMap((chunk) => {
    const declared = /^export\s+(?:async\s+)?(?:const|function)\s+([A-Za-z_]\w*)/.exec(chunk);
    if (!declared?.[1] || /\.query\s*[<(]/.test(chunk)) return [];
    const namesOne = [...chunk.matchAll(TABLE_REFERENCE)].some(
      ([, , name = '']) => TABLES.has(name) || VIEWS.has(name),
    );
    return namesOne ? [declared[1]] : [];
  });
}

/** What a file imports from other libs, as `libs/<lib>` and the names. */
function importsIn(source: string): { module: string; names: string[] }[] {
  return [
    ...source.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'@matchplane\/([a-z-]+)'/g),
  ].map(([, names = '', lib = '']) => ({
    module: `libs/${lib}`,
    names: names
      .split(',')
      .map((name) =>
        name
          .replace(/^\s*type\s+/, '')
          .split(/\s+as\s+/)[0]!
          .trim(),
      )
      .filter((name) => name.length > 0),
  }));
}

/** Each SQL fragment of one module that another module's file imports. */
function fragmentImports(sources: ReadonlyMap<string, string>): string[] {
  const fragments = new Map<string, Set<string>>();
  for (const [path, source] of sources) {
    const module = moduleOf(path);
    const names = fragments.get(module) ?? new Set<string>();
    for (const name of fragmentsIn(source)) names.add(name);
    fragments.set(module, names);
  }
  return [...sources].flatMap(([path, source]) =>
    importsIn(source).flatMap(({ module, names }) =>
      module === moduleOf(path)
        ? []
        : names
            .filter((name) => fragments.get(module)?.has(name))
            .map((name) => `${path} imports SQL fragment ${name} of ${module}`),
    ),
  );
}

/** The module whose source declares an owner class (its retention file exports it by name). */
function ownerModuleOf(owner: object): string {
  const name = owner.constructor.name;
  const declaring = [...sourceFiles(join(ROOT, 'libs'))].filter((file) =>
    new RegExp(`export class ${name}\\b`).test(readFileSync(file, 'utf8')),
  );
  if (declaring.length !== 1) throw new Error(`${name} is declared in ${declaring.length} files`);
  return moduleOf(relative(ROOT, declaring[0]!));
}

describe('table ownership', () => {
  const files = [...sourceFiles(join(ROOT, 'apps')), ...sourceFiles(join(ROOT, 'libs'))];
  const sources = new Map(files.map((file) => [relative(ROOT, file), readFileSync(file, 'utf8')]));
  const migrations = sourceFiles(join(ROOT, 'migrations')).map((file) =>
    readFileSync(file, 'utf8'),
  );

  it('every statement names only tables its own module owns, and views it owns or reads', () => {
    expect([...sources].flatMap(([path, source]) => sqlViolations(path, source)).sort()).toEqual(
      [],
    );
  });

  it('no module imports another module’s SQL fragment', () => {
    expect(fragmentImports(sources).sort()).toEqual([]);
  });

  it('statements assembled from declarations name only what their module may', async () => {
    // Every retention statement, from the owners the maintenance app discovers, under the module
    // that runs it (the owner's, whatever table its definition says).
    const assembled = [
      ...(await retentionPolicies()).map(({ name, owner }) => {
        const { purgeSql, lagSql } = owner.statements(name);
        return [`${ownerModuleOf(owner)}/retention:${name}`, `${purgeSql}\n${lagSql}`];
      }),
      ...[...STUCK_MATCH_RULES, ALLOCATING_MATCH_RULE].map((rule) => [
        `libs/matches/stuck-match:${rule.stage}`,
        stuckMatchRuleSql(rule),
      ]),
      ['libs/matches/silent-servers', SILENT_SERVER_MATCH_SQL],
    ] as const;
    expect(assembled.length).toBeGreaterThan(10);
    expect(assembled.flatMap(([path, sql]) => sqlViolations(path, sql))).toEqual([]);
  });

  it('every table the migrations create has an owner, and every view is a listed read model', () => {
    const created = (pattern: RegExp) =>
      migrations.flatMap((source) => [...source.matchAll(pattern)].map((match) => match[1]));
    const tables = created(/CREATE TABLE (?:IF NOT EXISTS )?([a-z_][a-z0-9_]*)/g);
    expect(tables.length).toBeGreaterThan(0);
    expect(tables.filter((table) => table !== undefined && !TABLES.has(table))).toEqual([]);
    expect(created(/CREATE (?:OR REPLACE )?VIEW ([a-z_][a-z0-9_]*)/g).sort()).toEqual(
      [...VIEWS].sort(),
    );
  });

  it('finds a statement naming another module’s table, and not one in a comment', () => {
    const source = `// rows deleted FROM matches go with it
      const sql = \`SELECT t.id FROM queue_tickets t
        JOIN match_participants p ON p.ticket_id = t.id\`;`;
    expect(sqlViolations('libs/tickets/src/ticket.store.ts', source)).toEqual([
      'libs/tickets/src/ticket.store.ts names match_participants (owned by libs/matches)',
    ]);
    expect(sqlViolations('libs/matches/src/match.store.ts', source)).toEqual([
      'libs/matches/src/match.store.ts names queue_tickets (owned by libs/tickets)',
    ]);
  });

  it('lets a listed reader read a view, and nobody else, and nobody write one', () => {
    const read = `SELECT d.player_id FROM durable_participants d WHERE d.match_id = $1`;
    expect(sqlViolations('libs/allocation/src/roster.store.ts', read)).toEqual([]);
    expect(sqlViolations('libs/matches/src/match.store.ts', read)).toEqual([]);
    expect(sqlViolations('libs/tickets/src/ticket.store.ts', read)).toEqual([
      'libs/tickets/src/ticket.store.ts reads view durable_participants (owned by libs/matches, not listed as a reader)',
    ]);
    expect(
      sqlViolations(
        'libs/allocation/src/roster.store.ts',
        `UPDATE durable_participants SET team = 1`,
      ),
    ).toEqual([
      'libs/allocation/src/roster.store.ts writes view durable_participants (owned by libs/matches; readers only read it)',
    ]);
  });

  it('finds another module’s SQL fragment imported, and not a store, an owner’s read or a type', () => {
    const sources = new Map([
      [
        'libs/tickets/src/ticket.rows.ts',
        `export function boundTicketJoin(
  alias: string,
): string {
  return \`JOIN queue_tickets \${alias} ON true\`;
}
export async function ticketsOf(manager: EntityManager) {
  return manager.query(\`SELECT id FROM queue_tickets\`);
}
export const LIVE_STATES = \`('SEARCHING')\`;
export class TicketStore { load() { return 'SELECT 1 FROM queue_tickets'; } }`,
      ],
      [
        'libs/matches/src/durable-participants.ts',
        `import { boundTicketJoin, LIVE_STATES, TicketStore, ticketsOf, type StoredTicket } from '@matchplane/tickets';`,
      ],
      ['libs/tickets/src/ticket.store.ts', `import { boundTicketJoin } from './ticket.rows';`],
    ]);
    expect(fragmentImports(sources)).toEqual([
      'libs/matches/src/durable-participants.ts imports SQL fragment boundTicketJoin of libs/tickets',
    ]);
  });
});
