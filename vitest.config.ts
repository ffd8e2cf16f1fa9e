import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    // KASSA_CANARY=1 runs only the test that must fail (see test/canary and .ci/run).
    include: process.env.KASSA_CANARY === '1' ? ['test/canary/*.canary.test.ts'] : ['test/**/*.test.ts'],
    exclude: process.env.KASSA_CANARY === '1' ? [] : ['test/canary/**', '**/node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: more workers only queue on the same CPUs and PostgreSQL.
    maxWorkers: 3,
  },
});
