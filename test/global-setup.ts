/**
 * One PostgreSQL for the whole run (DATABASE_URL, or an embedded server in
 * a temporary directory), and a migrated template database that every test
 * file clones into its own fresh database.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { startEmbedded } from '../db/embedded.js';
import { migrate } from '../db/migrate.js';

export const TEMPLATE = 'kassa_template';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Connection string of a database on the test server with rights to CREATE DATABASE; its path is replaced per test file. */
    adminUrl: string;
  }
}

export default async function setup(project: TestProject) {
  let adminUrl: string;
  let stop = async () => {};
  if (process.env.DATABASE_URL) {
    adminUrl = process.env.DATABASE_URL;
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'kassa-test-pg-'));
    // As root, PostgreSQL runs as the `postgres` user, which must be able to enter the directory.
    chmodSync(dir, 0o755);
    const server = await startEmbedded(join(dir, 'data'), { persistent: false }).catch((error: unknown) => {
      rmSync(dir, { recursive: true, force: true });
      throw error;
    });
    adminUrl = server.url('postgres');
    stop = async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    };
  }
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${TEMPLATE} with (force)`);
  await admin.unsafe(`create database ${TEMPLATE}`);
  const templateUrl = new URL(adminUrl);
  templateUrl.pathname = `/${TEMPLATE}`;
  await migrate(templateUrl.toString());
  await admin.end();
  project.provide('adminUrl', adminUrl);
  return stop;
}
