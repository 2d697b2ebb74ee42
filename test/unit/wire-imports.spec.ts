import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/*
 * libs/contracts (the wire types) and libs/sdk (the client) must load in a client that has no
 * Nest: neither may import @nestjs/* or a server-side library, directly or through anything they
 * import. The walk follows relative imports and @matchplane/* aliases (tsconfig.json paths),
 * type-only imports included (a client compiling against them would need those packages too).
 */
const root = path.resolve(__dirname, '../..');
const aliases = (
  JSON.parse(readFileSync(path.join(root, 'tsconfig.json'), 'utf8')) as {
    compilerOptions: { paths: Record<string, string[]> };
  }
).compilerOptions.paths;

/** Server-side packages a client must never need. */
const SERVER_ONLY =
  /^(@nestjs\/|typeorm$|pg$|ioredis$|bullmq$|class-validator$|class-transformer$|reflect-metadata$)/;

function resolveFile(base: string): string | undefined {
  for (const candidate of [`${base}.ts`, path.join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** Every package `entry` needs, each with the chain of files that imports it. */
function packagesReachedFrom(entry: string): Map<string, string[]> {
  const packages = new Map<string, string[]>();
  const seen = new Set<string>();
  const walk = (file: string, chain: string[]): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const here = [...chain, path.relative(root, file)];
    for (const { fileName: specifier } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true)
      .importedFiles) {
      const target = specifier.startsWith('.')
        ? resolveFile(path.resolve(path.dirname(file), specifier))
        : aliases[specifier]?.[0] !== undefined
          ? resolveFile(path.join(root, aliases[specifier][0]))
          : undefined;
      if (target) walk(target, here);
      else if (!specifier.startsWith('.') && !packages.has(specifier))
        packages.set(specifier, here);
    }
  };
  walk(entry, []);
  return packages;
}

function serverOnlyImports(entry: string): string[] {
  return [...packagesReachedFrom(path.join(root, entry))]
    .filter(([name]) => SERVER_ONLY.test(name))
    .map(([name, chain]) => `${name} via ${chain.join(' -> ')}`);
}

describe('wire imports', () => {
  it.each(['libs/contracts/src/index.ts', 'libs/sdk/src/index.ts'])(
    '%s needs no Nest and no server-side package',
    (entry) => {
      expect(serverOnlyImports(entry)).toEqual([]);
    },
  );

  it('sees a server-side import through an alias (the walk itself works)', () => {
    // libs/routing holds the Nest helpers the wire types used to carry.
    expect(serverOnlyImports('libs/routing/src/index.ts')).toEqual([
      expect.stringMatching(
        /^@nestjs\/common via libs\/routing\/src\/index\.ts -> libs\/routing\/src\/public-route\.decorator\.ts$/,
      ),
    ]);
    expect(serverOnlyImports('libs/players/src/index.ts').join('\n')).toMatch(/@nestjs\/common/);
  });
});
