/**
 * The canary: a test that must fail. `.ci/run` runs it alone, through the same
 * Vitest configuration and global setup as the suite (embedded PostgreSQL
 * included), and stops CI unless the run exits non-zero: proof, on every CI
 * run, that a failing test fails `npm test`. Not part of the suite
 * (vitest.config.ts runs it only when KASSA_CANARY=1).
 */
import { expect, inject, it } from 'vitest';

it('canary: fails on purpose', () => {
  // Touch what the suite touches (the global setup ran and provided the database URL)...
  expect(inject('adminUrl')).toMatch(/^postgres:\/\//);
  // ...then fail.
  expect(1, 'KASSA CANARY: this assertion must fail').toBe(2);
});
