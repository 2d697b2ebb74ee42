import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import vm from 'node:vm';
import { matchRow, useControlPlane } from '../support/journey';
import { REPO_ROOT } from '../support/processes';
import type { PlayerOutcome } from './sdk-package/player-journey';

const run = promisify(execFile);

/*
 * @matchplane/sdk as a package: `npm run sdk:pack` builds the tarball, a scratch project under the
 * OS temp dir (outside the repository, so nothing resolves through its node_modules or aliases)
 * installs it offline beside a tarball of `ws`, compiles a journey against the package's types
 * alone, and plays a duel with it against the real control plane.
 */
describe('@matchplane/sdk package', () => {
  const plane = useControlPlane({ apis: 1 });
  let workDir = '';
  let scratch = '';
  let tarball = '';
  let packageDir = '';

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(os.tmpdir(), 'matchplane-sdk-'));
    const packDir = path.join(workDir, 'pack');
    await run('npm', ['run', '--silent', 'sdk:pack'], {
      cwd: REPO_ROOT,
      env: { ...process.env, SDK_PACK_DIR: packDir },
    });
    // The package's one dependency, from the repository's own copy: no registry needed.
    const wsDir = path.dirname(require.resolve('ws/package.json'));
    await run('npm', ['pack', wsDir, '--pack-destination', packDir], { cwd: workDir });
    const packed = await readdir(packDir);
    tarball = path.join(
      packDir,
      packed.find((file) => file.startsWith('matchplane-sdk-'))!,
    );
    const wsTarball = path.join(
      packDir,
      packed.find((file) => file.startsWith('ws-'))!,
    );

    scratch = path.join(workDir, 'player');
    await mkdir(scratch);
    await writeFile(path.join(scratch, 'package.json'), '{"name":"scratch","private":true}\n');
    await run(
      'npm',
      ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', wsTarball, tarball],
      { cwd: scratch },
    );
    packageDir = path.join(scratch, 'node_modules', '@matchplane', 'sdk');
  }, 240_000);

  afterAll(async () => {
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('packs the built entries with their types, the contracts and the README, and nothing else', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    const files = stdout.split('\n').filter(Boolean);
    expect(files).toEqual(
      expect.arrayContaining([
        'package/package.json',
        'package/README.md',
        'package/dist/sdk/src/index.js',
        'package/dist/sdk/src/index.d.ts',
        'package/dist/sdk/src/node.js',
        'package/dist/sdk/src/node.d.ts',
        'package/dist/contracts/src/index.js',
        'package/dist/contracts/src/index.d.ts',
        'package/dist/esm/package.json',
        'package/dist/esm/sdk/src/index.js',
        'package/dist/esm/sdk/src/node.js',
        'package/dist/esm/contracts/src/index.js',
      ]),
    );
    expect(files.filter((file) => /\.spec\.|\.ts$/.test(file) && !file.endsWith('.d.ts'))).toEqual(
      [],
    );

    // Every import of the packed code is one of its own files, or, in the modules only the Node
    // entry loads, `ws` (the socket connector) and node:http(s) (the probe edges' transport).
    const nodeOnly: Record<string, string[]> = {
      'node-web-socket.js': ['ws'],
      'node-edge-post.js': ['node:http', 'node:https'],
    };
    for (const file of files.filter((name) => /\.(js|d\.ts)$/.test(name))) {
      const code = await readFile(
        path.join(scratch, 'node_modules/@matchplane/sdk', file.slice(8)),
        'utf8',
      );
      const specifiers = [...code.matchAll(/(?:require\(|from )["']([^"']+)["']/g)].map(
        (m) => m[1]!,
      );
      const foreign = specifiers.filter((specifier) => !specifier.startsWith('.'));
      expect({ file, foreign }).toEqual({
        file,
        foreign: nodeOnly[path.basename(file)] ?? [],
      });
    }
  });

  it('loads its main entry where neither Node modules nor ws exist, and opens sockets with the platform WebSocket', () => {
    const sdk = loadLikeABrowser(packageDir);
    expect(sdk.loaded.some((file) => file.endsWith('node-web-socket.js'))).toBe(false);
    const PlayerClient = sdk.exports.PlayerClient as new (options: object) => {
      subscribe(handlers: object): { close(): void };
    };

    // No WebSocket on the platform and none installed: a clear error, not a crash on load.
    const offline = new PlayerClient({ baseUrl: 'https://mm.example.com', token: 'tok' });
    expect(() => offline.subscribe({ onEvent: () => undefined })).toThrow(
      /no global WebSocket.*@matchplane\/sdk\/node/,
    );

    sdk.context.WebSocket = FakeBrowserWebSocket;
    const events: unknown[] = [];
    const subscription = new PlayerClient({
      baseUrl: 'https://mm.example.com',
      token: 'tok',
    }).subscribe({ onEvent: (event: unknown) => events.push(event) });
    const socket = FakeBrowserWebSocket.last!;
    expect(socket.url).toBe('wss://mm.example.com/v1/notifications');
    // A browser cannot set headers: the token rides as the bearer subprotocol.
    expect(socket.protocols).toEqual(['matchplane.notifications.v1', 'matchplane.bearer.tok']);
    socket.onmessage?.({
      data: '{"type":"ready","playerId":"p","bufferLimit":8,"heartbeatIntervalMs":1000}',
    });
    const event = {
      type: 'event',
      event: 'match.state_changed',
      matchId: 'm',
      revision: 1,
      state: 'FORMED',
      occurredAt: 'now',
    };
    socket.onmessage?.({ data: new TextEncoder().encode(JSON.stringify(event)).buffer });
    expect(events).toEqual([event]);
    subscription.close();
    expect(socket.closedWith).toEqual([1000, 'client closed']);
  });

  it('loads as ES modules through the import condition, the Node connector installed by its entry', async () => {
    await writeFile(
      path.join(scratch, 'esm-check.mjs'),
      [
        "import { PlayerClient, ServerClient } from '@matchplane/sdk';",
        "import { nodeWebSocket } from '@matchplane/sdk/node';",
        "import { PlayerRoutes } from '@matchplane/sdk/contracts';",
        'const subscription = new PlayerClient({ baseUrl: "http://127.0.0.1:9", token: "t" })',
        '  .subscribe({ onEvent: () => undefined });',
        'subscription.close();',
        'console.log(JSON.stringify({',
        '  main: import.meta.resolve("@matchplane/sdk"),',
        '  node: import.meta.resolve("@matchplane/sdk/node"),',
        '  contracts: import.meta.resolve("@matchplane/sdk/contracts"),',
        '  types: [typeof PlayerClient, typeof ServerClient, typeof nodeWebSocket, typeof PlayerRoutes],',
        '}));',
      ].join('\n'),
    );
    const { stdout } = await run(process.execPath, ['esm-check.mjs'], { cwd: scratch });
    const loaded = JSON.parse(stdout) as Record<string, string | string[]>;
    expect(loaded.types).toEqual(['function', 'function', 'object', 'object']);
    // The ES module build, not the CommonJS one wrapped: a bundler tree-shakes it.
    expect(loaded.main).toMatch(/\/dist\/esm\/sdk\/src\/index\.js$/);
    expect(loaded.node).toMatch(/\/dist\/esm\/sdk\/src\/node\.js$/);
    expect(loaded.contracts).toMatch(/\/dist\/esm\/contracts\/src\/index\.js$/);
  });

  it('plays a duel to its end from a scratch project compiled against the package types alone', () =>
    plane.diagnose(async () => {
      await copyFile(
        path.join(__dirname, 'sdk-package/player-journey.ts'),
        path.join(scratch, 'journey.ts'),
      );
      // The browser's lib and no Node types: what the package declares must stand on its own.
      await writeFile(
        path.join(scratch, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            module: 'node16',
            moduleResolution: 'node16',
            target: 'ES2022',
            lib: ['ES2023', 'DOM'],
            types: [],
            strict: true,
            skipLibCheck: false,
            noUncheckedIndexedAccess: true,
          },
          files: ['journey.ts'],
        }),
      );
      await run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json'], {
        cwd: scratch,
      });
      const { stdout } = await run(
        process.execPath,
        [
          '-e',
          "require('./journey.js').main(process.argv[1]).then((out) => console.log(out))",
          plane.apiUrl(0),
        ],
        { cwd: scratch, timeout: 150_000 },
      );
      const [a, b] = JSON.parse(stdout) as PlayerOutcome[];

      expect(b!.matchId).toBe(a!.matchId);
      expect(b!.endpoint).toBe(a!.endpoint);
      expect(new Set([a!.team, b!.team])).toEqual(new Set([0, 1]));
      for (const player of [a!, b!]) {
        expect(player.joinedAs).toBe(player.playerId);
        expect(player.ended).toEqual({ outcome: 'COMPLETED', winningTeam: expect.any(Number) });
        expect(player.ticketState).toBe('COMPLETED');
        expect(player.notifiedStates).toContain('COMPLETED');
      }
      expect(await matchRow(plane.ds, a!.matchId)).toMatchObject({ state: 'COMPLETED' });
    }));
});

/** A WHATWG WebSocket as far as the SDK's browser connector uses one. */
class FakeBrowserWebSocket {
  static last: FakeBrowserWebSocket | undefined;
  readyState = 0;
  binaryType = 'blob';
  onopen: (() => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onerror: (() => void) | null = null;
  onclose: ((event: { code: number; reason: string }) => void) | null = null;
  closedWith: [number?, string?] | undefined;

  constructor(
    readonly url: string,
    readonly protocols: string[],
  ) {
    FakeBrowserWebSocket.last = this;
  }

  send(): void {}

  close(code?: number, reason?: string): void {
    this.closedWith = [code, reason];
    this.readyState = 3;
  }
}

/**
 * Runs the package's main entry the way a browser bundle would: CommonJS with a `require` that
 * resolves only the package's own files, in a context without `process`, `Buffer` or `require`.
 */
function loadLikeABrowser(packageDir: string): {
  exports: Record<string, unknown>;
  loaded: string[];
  context: vm.Context;
} {
  const context = vm.createContext({
    console,
    setTimeout,
    clearTimeout,
    URL,
    TextDecoder,
    AbortSignal,
  });
  const modules = new Map<string, { exports: Record<string, unknown> }>();
  const load = (file: string): Record<string, unknown> => {
    const known = modules.get(file);
    if (known) return known.exports;
    const module = { exports: {} as Record<string, unknown> };
    modules.set(file, module);
    const code = readFileSync(file, 'utf8');
    const factory = vm.runInContext(`(function (exports, require, module) {${code}\n})`, context, {
      filename: file,
    }) as (exports: object, require: (specifier: string) => unknown, module: object) => void;
    factory(
      module.exports,
      (specifier) => {
        if (!specifier.startsWith('.')) throw new Error(`${file} required '${specifier}'`);
        const target = path.resolve(path.dirname(file), specifier.replace(/(\.js)?$/, '.js'));
        if (!target.startsWith(packageDir)) throw new Error(`${file} reached outside the package`);
        return load(target);
      },
      module,
    );
    return module.exports;
  };
  const manifest = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as {
    exports: { '.': { default: string } };
  };
  const exports = load(path.join(packageDir, manifest.exports['.'].default));
  return { exports, loaded: [...modules.keys()], context };
}
