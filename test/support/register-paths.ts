// Jest's globalSetup is transpiled but not module-mapped, so it resolves the @matchplane/*
// aliases through tsconfig's own paths. Import this first.
import path from 'node:path';
import { register } from 'tsconfig-paths';
import tsconfig from '../../tsconfig.json';

register({ baseUrl: path.resolve(__dirname, '../..'), paths: tsconfig.compilerOptions.paths });
