/**
 * Kassa's layers (ARCHITECTURE.md), checked by `npm run lint:deps` in CI:
 *   edges → modules → platform;  adapters → module index/ports + platform;
 *   only the composition root (server/main.ts, server/cli.ts, server/compose.ts) sees adapters.
 * test/architecture/layers.integration.test.ts runs these rules on a fixture that breaks them.
 */
const ROOT = '^server/(main|cli|compose)\\.ts$';
/** Network I/O lives in a module's *.job.ts files; jobs/ calls them, outside any transaction. */
const JOB_FILE = '^server/modules/[^/]+/[^/]+\\.job\\.ts$';
/** The ChainPort's declaration: only job files, adapters and the root's Deps reach it. */
const CHAIN_PORT = '^server/modules/networks/ports\\.ts$';
/**
 * The network families (networks/families/): pure rules and data that import nothing of Kassa.
 * The money catalog derives its currency/network tables from them (their index.ts is the
 * second public face of networks), which cannot make a cycle because they import nothing back.
 */
const FAMILIES = '^server/modules/networks/families/';
const FAMILIES_INDEX = `${FAMILIES}index\\.ts$`;
/** The one edge allowed a job file: the sandbox's forced withdrawal outcome broadcasts like the job. */
const SANDBOX_HELPER_EDGE = '^server/edges/rest/withdrawal-routes\\.ts$';
/** One forbidden import: every rule is an error (CI fails on it). */
const rule = (name, comment, from, to) => ({ name, comment, severity: 'error', from, to });
module.exports = {
  forbidden: [
    rule('no-circular', 'An import cycle makes load order and ownership unclear.',
      {},
      { circular: true }),
    rule('platform-imports-nothing-of-kassa', 'server/platform/ is the bottom layer: config, errors, secrets, clock, paths.',
      { path: '^server/platform/' },
      { path: '^(server/(?!platform/)|db/|jobs/)' }),
    rule('modules-do-not-import-upwards', 'Modules import platform, db, jobs/enqueue and other modules — never edges, adapters, jobs tasks or the root.',
      { path: '^server/modules/' },
      { path: ['^server/(edges|adapters)/', '^server/[^/]+\\.ts$', '^jobs/(tasks/|worker)'] }),
    rule('modules-only-through-index', "Another module is reached only through its index.ts, its whole public face.",
      { path: '^server/modules/([^/]+)/' },
      { path: '^server/modules/[^/]+/', pathNot: ['^server/modules/$1/', '^server/modules/[^/]+/index\\.ts$', CHAIN_PORT, FAMILIES_INDEX] }),
    rule('network-families-import-nothing-of-kassa', 'The network families are the leaf the money catalog is derived from: libraries and each other only.',
      { path: FAMILIES },
      { path: '^(server|db|jobs|widget)/', pathNot: FAMILIES }),
    rule('widget-imports-only-pure-rules', 'The browser bundle may share pure server rules (view shapes) and types (the tRPC router type), never code with I/O.',
      { path: '^widget/' },
      { path: '^(server|jobs|db)/', pathNot: '^server/modules/[^/]+/[^/]+\\.rules\\.ts$', dependencyTypesNot: ['type-only'] }),
    rule('outside-modules-only-through-index', 'Edges, adapters, jobs and the root see a module only through its index.ts (the widget: widget-imports-only-pure-rules).',
      { pathNot: ['^server/modules/', '^widget/'] },
      { path: '^server/modules/[^/]+/', pathNot: ['^server/modules/[^/]+/index\\.ts$', JOB_FILE, CHAIN_PORT] }),
    rule('chain-port-only-from-jobs', 'Chain calls never run inside a database transaction: the ChainPort is reachable only from *.job.ts files (called by jobs/), adapters and the root.',
      { pathNot: [JOB_FILE, '^server/adapters/', ROOT, '^server/deps\\.ts$', '^server/modules/networks/'] },
      { path: CHAIN_PORT }),
    rule('job-files-only-from-jobs', 'A *.job.ts does network I/O; only jobs/tasks (and the sandbox outcome helper) call it.',
      { pathNot: ['^jobs/', JOB_FILE, SANDBOX_HELPER_EDGE] },
      { path: JOB_FILE }),
    rule('only-the-root-imports-adapters', 'Adapters (the sandbox among them) are chosen in one composition root; nothing else imports them.',
      { pathNot: [ROOT, '^server/adapters/'] },
      { path: '^server/adapters/' }),
    rule('adapters-implement-ports-only', 'Adapters import module ports (via index.ts), platform and db; never edges, jobs or the root.',
      { path: '^server/adapters/' },
      { path: ['^server/edges/', '^server/[^/]+\\.ts$', '^jobs/(tasks/|worker)'] }),
    rule('edges-do-not-import-jobs-or-root', 'Edges parse, call one module function and answer.',
      { path: '^server/edges/' },
      { path: ['^jobs/(tasks/|worker)', ROOT] }),
    rule('jobs-call-modules-not-edges', 'jobs/tasks stay thin and call module functions.',
      { path: '^jobs/' },
      { path: ['^server/edges/', ROOT] }),
    rule('db-is-below-modules', 'db/ (schema, client, migrations) imports only platform.',
      { path: '^db/' },
      { path: ['^server/(?!platform/)', '^jobs/'] }),
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    // The layers are the shipped code's. Tests, bench, soak and scripts reach into modules on purpose
    // (a unit under test), and test/architecture/fixture breaks every rule on purpose.
    exclude: { path: '^(node_modules|dist|test|bench|soak|scripts)/' },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
