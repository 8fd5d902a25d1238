// Lint: type-aware rules from typescript-eslint and the import boundaries of docs/ARCHITECTURE.md
// (import-x). Unused exports and import cycles are knip's (knip.jsonc), run by `npm run lint` after
// this: import-x/no-cycle found the same cycles (none; both skip `import type`) for a quarter of
// ESLint's time.
import { readdirSync } from 'node:fs';
import { defineConfig } from 'eslint/config';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const root = import.meta.dirname;

/**
 * Each folder of server/ is a module (server/<module>/schema.ts, store.ts, service.ts, routes.ts):
 * another module reaches it through its service or its other files, never through its store.ts
 * (queries; a large one is split into store-<part>.ts files, equally private) or its schema.ts
 * (tables). One zone per module, so that a new module is covered at once.
 *
 * The one exception is what drizzle needs: a schema.ts may import another module's schema.ts.
 * - server/db/schema.ts gathers every module's tables (`export * from '../<module>/schema.js'`) for
 *   drizzle-kit (drizzle.config.ts points at that file) and for the typed handle that
 *   server/platform/db/open.ts makes, the one other file that imports it;
 * - a table's foreign key names the table it references (`.references(() => cabinets.id)`), so a
 *   module's schema.ts imports the tables of server/tenancy/schema.ts.
 * Minimatch globs: `!(name)` is any name but that one.
 */
const modules = readdirSync(`${root}/server`, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
const moduleZones = modules.flatMap((module) => [
  {
    target: ['server/*.*', `server/!(${module})/**`],
    from: [`server/${module}/store?(-*).ts`],
    message: `server/${module}/store.ts (and its store-*.ts parts) is the ${module} module's own: go through its service.`,
  },
  {
    target:
      module === 'db'
        ? [
            'server/*.*',
            'server/!(db|platform)/**/!(schema).*',
            'server/platform/*.*',
            'server/platform/!(db)/**',
            'server/platform/db/!(open).*',
          ]
        : ['server/*.*', `server/!(${module})/**/!(schema).*`],
    from: [`server/${module}/schema.ts`],
    message: `server/${module}/schema.ts is the ${module} module's own: only another schema.ts (drizzle) may import it.`,
  },
]);

const electronPackage = {
  paths: [{ name: 'electron', message: 'Only the desktop shell (electron/) imports Electron.' }],
  patterns: [{ group: ['electron/*'], message: 'Only the desktop shell (electron/) imports Electron.' }],
};

/**
 * The platform layer (server/platform/: the database engine, the HTTP plumbing, logging) is where a
 * trick that reaches under a library or the language may live, with a line that says why; the
 * domain modules, the contract and the console use plain code. The transaction rule below holds
 * everywhere but the two files that build the transactions.
 */
const PLATFORM_ONLY = "is allowed only in the server's platform layer (server/platform/), with a line that says why";
const platformImports = {
  paths: [
    ...electronPackage.paths,
    { name: 'node:async_hooks', message: `async_hooks ${PLATFORM_ONLY}.` },
    { name: 'async_hooks', message: `async_hooks ${PLATFORM_ONLY}.` },
    { name: 'pino', importNames: ['symbols'], message: `Reading pino's internals (pino.symbols) ${PLATFORM_ONLY}.` },
  ],
  patterns: electronPackage.patterns,
};
/**
 * The hub writes every query as a postgres.js tagged template: drizzle declares its tables
 * (server/hub/schema.ts, for drizzle-kit) and reads its migrations' files (drizzle-orm/migrator),
 * and builds none of its queries.
 */
const HUB_SQL = "The hub's queries are postgres.js tagged templates (deps.sql); drizzle only declares its tables, in server/hub/schema.ts.";
const hubImports = {
  paths: [...platformImports.paths, { name: 'drizzle-orm', message: HUB_SQL }],
  patterns: [...platformImports.patterns, { group: ['drizzle-orm/*', '!drizzle-orm/migrator'], message: HUB_SQL }],
};
const platformSyntax = [
  {
    // Function(...) as well as globalThis.Function(...).
    selector:
      "NewExpression[callee.name='Function'], CallExpression[callee.name='Function'], NewExpression[callee.property.name='Function'], CallExpression[callee.property.name='Function']",
    message: `Code made at run time (new Function) ${PLATFORM_ONLY}.`,
  },
  {
    selector:
      "MemberExpression[property.name='symbols'][object.name='pino'], MemberExpression[property.name='symbols'][object.property.name='pino']",
    message: `Reading pino's internals (pino.symbols) ${PLATFORM_ONLY}.`,
  },
  { selector: 'ImportExpression[source.value=/^(node:)?async_hooks$/]', message: `async_hooks ${PLATFORM_ONLY}.` },
];
/**
 * A store writes its queries with drizzle's builder, a hot one prepared once through preparedQuery
 * (server/platform/db/prepared-query.ts): SQL text prepared on the connection stays in the platform
 * layer. The hub, on PostgreSQL, writes every query as a postgres.js tagged template (hubImports).
 */
const RAW_SQL = `A statement prepared from SQL text ${PLATFORM_ONLY}: write the query with drizzle's builder (preparedQuery for a hot path).`;
const rawSqlSyntax = [
  { selector: "CallExpression[callee.property.name='prepare'][arguments.length>0]", message: RAW_SQL },
  { selector: "CallExpression[callee.property.name='prepared']", message: RAW_SQL },
  { selector: "MemberExpression[property.name='$client']", message: RAW_SQL },
  { selector: "CallExpression[callee.property.name='exec'][callee.object.property.name='sqlite']", message: RAW_SQL },
];
/**
 * A synced table is written through its declaration (syncedTable in the module's sync.ts), whose
 * insert, update and erase queue the change for the cabinet's other installs: a write beside it
 * would leave them different. Jobs travel at each status: their store's updates are queued by
 * server/automation/sync.ts, the only caller of capture(). The staff list is keyed by email and
 * queued by server/tenancy/users.ts.
 */
const SYNCED_WRITE =
  "A write of a synced table goes through its declaration's insert, update or erase (server/sync/synced-table.ts), which queues it for the other installs.";
const syncedWriteSyntax = [
  {
    selector:
      "CallExpression[callee.property.name='insert'][arguments.0.name=/^(clients|opportunities|devis|contracts|events|jobs|comparaisons|conseils)$/]",
    message: SYNCED_WRITE,
  },
  {
    // conseils is left out: its one update sets the PDF, a column that stays on each install.
    selector:
      "CallExpression[callee.property.name='update'][arguments.0.name=/^(clients|opportunities|devis|contracts|events|comparaisons)$/]",
    message: SYNCED_WRITE,
  },
];
const jobUpdateSyntax = {
  selector: "CallExpression[callee.property.name='update'][arguments.0.name='jobs']",
  message: "A job's row is updated by its store (server/automation/store.ts), whose moves server/automation/sync.ts queues.",
};
const captureSyntax = {
  selector: "CallExpression[callee.property.name='capture']",
  message:
    "A synced table's writes queue themselves (insert, update, erase); only a job's moves are queued by hand, in server/automation/sync.ts.",
};
const transactionSyntax = {
  selector:
    "MemberExpression[property.name='transaction'][object.name='sqlite'], MemberExpression[property.name='transaction'][object.property.name='sqlite']",
  message:
    'Run it with db.transaction(work) or db.immediateTransaction(work) (server/platform/db/transactions.ts): built once per connection.',
};

export default defineConfig(
  {
    ignores: [
      'dist/',
      '**/dist/',
      'build/',
      'release/',
      'coverage/',
      'data/',
      'test-artifacts/',
      '**/test-artifacts/',
      'server/db/migrations/',
    ],
  },
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  {
    files: ['**/*.{ts,tsx,cts,mts}'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: {
        // Each file belongs to the nearest tsconfig.json: tsconfig.json (server, shared, bench, test,
        // the root config files), renderer/tsconfig.json (renderer/src) and electron/tsconfig.json.
        // renderer/vite.config.ts is in renderer/tsconfig.node.json, which no tsconfig.json names.
        projectService: {
          allowDefaultProject: ['renderer/vite.config.ts'],
          defaultProject: 'renderer/tsconfig.node.json',
        },
        tsconfigRootDir: root,
      },
    },
    plugins: {
      '@typescript-eslint': tseslint.plugin,
      'import-x': importX,
    },
    settings: {
      // How import-x resolves an import to a file: TypeScript sources, by each tsconfig's rules.
      'import-x/extensions': ['.ts', '.tsx', '.cts', '.mts', '.js', '.jsx', '.cjs', '.mjs'],
      'import-x/external-module-folders': ['node_modules', 'node_modules/@types'],
      'import-x/resolver-next': [
        createTypeScriptImportResolver({
          project: ['tsconfig.json', 'renderer/tsconfig.json', 'renderer/tsconfig.node.json', 'electron/tsconfig.json'],
          noWarnOnMultipleProjects: true,
        }),
        createNodeResolver(),
      ],
    },
    rules: {
      // Promises: none left unhandled (`void` marks a deliberate fire-and-forget), none where a
      // callback's result is ignored or a condition expects a boolean.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          caughtErrors: 'all',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // Types are imported and exported as types (verbatimModuleSyntax keeps every other import).
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { prefer: 'type-imports', fixStyle: 'inline-type-imports', disallowTypeAnnotations: true },
      ],
      '@typescript-eslint/no-import-type-side-effects': 'error',
      '@typescript-eslint/consistent-type-exports': ['error', { fixMixedExportsWithInlineTypeSpecifier: true }],

      'import-x/no-self-import': 'error',
      'import-x/no-restricted-paths': [
        'error',
        {
          basePath: root,
          zones: [
            {
              target: ['server'],
              from: ['electron', 'renderer'],
              message: 'The server runs without the desktop shell and does not build the console.',
            },
            {
              target: ['renderer'],
              from: ['server', 'electron'],
              message: 'The console talks to the server over HTTP, with the contract of shared/.',
            },
            {
              target: ['shared'],
              from: ['server', 'renderer', 'electron'],
              message: 'shared/ is the contract: it imports nothing from the server, the console or the shell.',
            },
            {
              target: ['insurers', 'packages'],
              from: ['server', 'shared', 'renderer', 'electron', 'bench', 'test'],
              message: 'An insurer adapter, and the adapter kit, reach Courtier through @courtier/adapter-kit only (docs/ADAPTERS.md).',
            },
            ...moduleZones,
          ],
        },
      ],
    },
  },
  {
    // An adapter gets zod, Playwright's types and everything else of Courtier from the kit: one zod
    // for its schemas and Courtier's, one RobotError class.
    files: ['insurers/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'zod', message: 'Import z from @courtier/adapter-kit.' },
            { name: 'playwright-core', message: 'Import the Page and Locator types from @courtier/adapter-kit.' },
          ],
        },
      ],
    },
  },
  {
    files: ['server/**', 'shared/**', 'renderer/**'],
    ignores: ['server/platform/**'],
    rules: {
      'no-restricted-imports': ['error', platformImports],
      'no-restricted-syntax': [
        'error',
        transactionSyntax,
        ...platformSyntax,
        ...rawSqlSyntax,
        ...syncedWriteSyntax,
        jobUpdateSyntax,
        captureSyntax,
      ],
    },
  },
  {
    files: ['server/automation/store.ts', 'server/automation/store-queue.ts'],
    rules: {
      'no-restricted-syntax': ['error', transactionSyntax, ...platformSyntax, ...rawSqlSyntax, ...syncedWriteSyntax, captureSyntax],
    },
  },
  {
    files: ['server/automation/sync.ts'],
    rules: {
      'no-restricted-syntax': ['error', transactionSyntax, ...platformSyntax, ...rawSqlSyntax, ...syncedWriteSyntax, jobUpdateSyntax],
    },
  },
  {
    files: ['server/hub/**'],
    rules: {
      'no-restricted-imports': ['error', hubImports],
      'no-restricted-syntax': ['error', transactionSyntax, ...platformSyntax],
    },
  },
  {
    files: ['server/hub/schema.ts'],
    rules: { 'no-restricted-imports': ['error', platformImports] },
  },
  {
    files: ['server/platform/**'],
    rules: { 'no-restricted-imports': ['error', electronPackage] },
  },
  {
    // better-sqlite3's transaction(fn) builds its wrappers on every call: transactions are built once per connection.
    files: ['server/platform/**'],
    ignores: ['server/platform/db/transactions.ts', 'server/platform/db/open.ts'],
    rules: { 'no-restricted-syntax': ['error', transactionSyntax] },
  },
  {
    // Config files that no tsconfig holds: linted without types.
    files: ['**/*.{js,mjs,cjs}'],
    languageOptions: { sourceType: 'module' },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-unused-vars': 'error',
    },
  },
);
