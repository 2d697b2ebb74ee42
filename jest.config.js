// Three tiers (see docs/ARCHITECTURE.md "Tests"): unit needs nothing; integration and e2e need
// real PostgreSQL and Redis, and each test file gets its own database cloned from a migrated
// template plus its own Redis key prefix, so files run in parallel.
const aliases = {
  '^@matchplane/migrations$': '<rootDir>/migrations',
  // The repo runs on Node: its SDK is the Node entry (libs/sdk/README.md "Entries").
  '^@matchplane/sdk(/node)?$': '<rootDir>/libs/sdk/src/node',
  '^@matchplane/(domain|persistence|outbox|join-auth|contracts|errors|routing|config|observability|matches|tickets|players|allocation|idempotency|latency|rule-sets)$':
    '<rootDir>/libs/$1/src',
};

const base = {
  rootDir: __dirname,
  testEnvironment: 'node',
  moduleFileExtensions: ['ts', 'js', 'json'],
  // Type checking is `npm run build` and `npm run lint`; tests transpile only, for speed.
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }] },
  moduleNameMapper: aliases,
  modulePathIgnorePatterns: ['<rootDir>/dist/'],
};

module.exports = {
  // A global option (Jest ignores it per project): long enough for the e2e suites' processes.
  testTimeout: 120_000,
  // Test files in a worker process, replaced once it holds more than this after a file: what
  // the files leave behind adds up (a single in-band process reached V8's 4 GB heap limit after
  // 1,470 s of the full run and died). Set, it also keeps Jest from running in band on 2 cores.
  workerIdleMemoryLimit: '1GB',
  projects: [
    {
      ...base,
      displayName: 'unit',
      setupFiles: ['<rootDir>/test/support/sdk-node-web-socket.setup.ts'],
      testMatch: [
        '<rootDir>/libs/**/*.spec.ts',
        '<rootDir>/apps/**/*.spec.ts',
        '<rootDir>/test/unit/**/*.spec.ts',
      ],
    },
    {
      ...base,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    {
      ...base,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.spec.ts'],
      globalSetup: '<rootDir>/test/support/e2e-global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    // The engine SDKs against the real stack (sdks/run-tests.sh): not in `npm test`, they need
    // the SDKs' toolchains (Debian's mono).
    {
      ...base,
      displayName: 'sdk-live',
      testMatch: ['<rootDir>/test/sdk-live/**/*.spec.ts'],
      globalSetup: '<rootDir>/test/support/e2e-global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
