import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import prettier from 'eslint-config-prettier';
import { readdirSync } from 'node:fs';

const APPS = readdirSync(new URL('./apps', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'libs/sdk/dist/**',
      'node_modules/**',
      'coverage/**',
      'eslint.config.mjs',
      'jest.config.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { prefer: 'type-imports', fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'import-x/no-cycle': 'error',
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/libs/*', '../../libs/**'],
              message: 'Import libs through @matchplane/<lib>.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['libs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/libs/*', '../../libs/**', '**/apps/*', '**/apps/**'],
              message: 'Import libs through @matchplane/<lib>; libs never import apps.',
            },
          ],
        },
      ],
    },
  },
  {
    // Request DTOs: IsOptional lets null through to services that never expect it.
    files: ['apps/api/src/**/*.ts'],
    // The config reads environment variables, which are strings or absent, never null.
    ignores: ['apps/api/src/cli/**', 'apps/api/src/api.config.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/libs/*', '../../libs/**'],
              message: 'Import libs through @matchplane/<lib>.',
            },
          ],
          paths: [
            {
              name: 'class-validator',
              importNames: ['IsOptional'],
              message: 'Use IsOptionalNonNull (apps/api/src/http): IsOptional also accepts null.',
            },
          ],
        },
      ],
    },
  },
  {
    // No app imports another (what two apps share lives in libs); the demo and the studio example
    // drive the others and are exempt.
    files: ['apps/**/*.ts'],
    ignores: ['apps/demo/**', 'apps/studio-example/**'],
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: APPS.map((app) => ({
            target: `./apps/${app}`,
            from: './apps',
            except: [`./${app}`],
            message: 'An app imports only libs and itself; move what apps share into libs/.',
          })),
        },
      ],
    },
  },
  {
    files: ['**/*.spec.ts', 'test/**/*.ts'],
    // Jest's asymmetric matchers (expect.objectContaining, ...) are typed any.
    rules: {
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
    },
  },
  prettier,
);
