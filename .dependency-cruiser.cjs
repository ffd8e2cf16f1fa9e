/**
 * Kassa's layers (ARCHITECTURE.md), checked by `npm run lint:deps` in CI:
 *   edges → modules → platform;  adapters → module index/ports + platform;
 *   only the composition root (server/main.ts, server/cli.ts, server/compose.ts) sees adapters.
 * test/architecture/deps.unit.test.ts runs these rules on a fixture that breaks them.
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
const FAMILIES_INDEX = '^server/modules/networks/families/index\\.ts$';
/** The one edge allowed a job file: the sandbox's forced withdrawal outcome broadcasts like the job. */
const SANDBOX_HELPER_EDGE = '^server/edges/rest/withdrawal-routes\\.ts$';
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import cycle makes load order and ownership unclear.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'platform-imports-nothing-of-kassa',
      comment: 'server/platform/ is the bottom layer: config, errors, secrets, clock, paths.',
      severity: 'error',
      from: { path: '^server/platform/' },
      to: { path: '^(server/(?!platform/)|db/|jobs/)' },
    },
    {
      name: 'modules-do-not-import-upwards',
      comment: 'Modules import platform, db, jobs/enqueue and other modules — never edges, adapters, jobs tasks or the root.',
      severity: 'error',
      from: { path: '^server/modules/' },
      to: { path: ['^server/(edges|adapters)/', '^server/[^/]+\\.ts$', '^jobs/(tasks/|worker)'] },
    },
    {
      name: 'modules-only-through-index',
      comment: "Another module is reached only through its index.ts, its whole public face.",
      severity: 'error',
      from: { path: '^server/modules/([^/]+)/' },
      to: { path: '^server/modules/[^/]+/', pathNot: ['^server/modules/$1/', '^server/modules/[^/]+/index\\.ts$', CHAIN_PORT, FAMILIES_INDEX] },
    },
    {
      name: 'network-families-import-nothing-of-kassa',
      comment: 'The network families are the leaf the money catalog is derived from: libraries and each other only.',
      severity: 'error',
      from: { path: FAMILIES },
      to: { path: '^(server|db|jobs|widget)/', pathNot: FAMILIES },
    },
    {
      name: 'widget-imports-only-pure-rules',
      comment: 'The browser bundle may share pure server rules (view shapes) and types (the tRPC router type), never code with I/O.',
      severity: 'error',
      from: { path: '^widget/' },
      to: { path: '^(server|jobs|db)/', pathNot: '^server/modules/[^/]+/[^/]+\\.rules\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'outside-modules-only-through-index',
      comment: 'Edges, adapters, jobs and the root see a module only through its index.ts (the widget: widget-imports-only-pure-rules).',
      severity: 'error',
      from: { pathNot: ['^server/modules/', '^widget/'] },
      to: { path: '^server/modules/[^/]+/', pathNot: ['^server/modules/[^/]+/index\\.ts$', JOB_FILE, CHAIN_PORT] },
    },
    {
      name: 'chain-port-only-from-jobs',
      comment: 'Chain calls never run inside a database transaction: the ChainPort is reachable only from *.job.ts files (called by jobs/), adapters and the root.',
      severity: 'error',
      from: { pathNot: [JOB_FILE, '^server/adapters/', ROOT, '^server/deps\\.ts$', '^server/modules/networks/'] },
      to: { path: CHAIN_PORT },
    },
    {
      name: 'job-files-only-from-jobs',
      comment: 'A *.job.ts does network I/O; only jobs/tasks (and the sandbox outcome helper) call it.',
      severity: 'error',
      from: { pathNot: ['^jobs/', JOB_FILE, SANDBOX_HELPER_EDGE] },
      to: { path: JOB_FILE },
    },
    {
      name: 'only-the-root-imports-adapters',
      comment: 'Adapters (the sandbox among them) are chosen in one composition root; nothing else imports them.',
      severity: 'error',
      from: { pathNot: [ROOT, '^server/adapters/'] },
      to: { path: '^server/adapters/' },
    },
    {
      name: 'adapters-implement-ports-only',
      comment: 'Adapters import module ports (via index.ts), platform and db; never edges, jobs or the root.',
      severity: 'error',
      from: { path: '^server/adapters/' },
      to: { path: ['^server/edges/', '^server/[^/]+\\.ts$', '^jobs/(tasks/|worker)'] },
    },
    {
      name: 'edges-do-not-import-jobs-or-root',
      comment: 'Edges parse, call one module function and answer.',
      severity: 'error',
      from: { path: '^server/edges/' },
      to: { path: ['^jobs/(tasks/|worker)', ROOT] },
    },
    {
      name: 'jobs-call-modules-not-edges',
      comment: 'jobs/tasks stay thin and call module functions.',
      severity: 'error',
      from: { path: '^jobs/' },
      to: { path: ['^server/edges/', ROOT] },
    },
    {
      name: 'db-is-below-modules',
      comment: 'db/ (schema, client, migrations) imports only platform.',
      severity: 'error',
      from: { path: '^db/' },
      to: { path: ['^server/(?!platform/)', '^jobs/'] },
    },
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
