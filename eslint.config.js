// ESLint (flat config): typescript-eslint's recommended rules over every TypeScript file, without
// type information so that a run stays quick on a small machine; formatting is Prettier's
// (eslint-config-prettier turns off the rules that would disagree with it).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      // wrangler writes its state next to the configuration it runs (the bench's bare peer has its own).
      '**/.wrangler/',
      '.local-data/',
      '.bench-data/',
      'dist/',
      'test-artifacts/',
      'drizzle/meta/',
      'shared/http/dashboard/script.ts',
      'shared/codemode/sandbox/module.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // `_`-prefixed names are deliberately unused (a parameter kept for its position).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Type-only imports stay visibly type-only (the compiler's verbatimModuleSyntax needs them);
      // `import('…').T` in a declaration file or a lazily loaded module's type is fine.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      // The screening of stored text matches control characters on purpose (shared/core/text.ts).
      'no-control-regex': 'off',
      // A `/// <reference path>` brings in an ambient module declaration (a .wasm import's type).
      '@typescript-eslint/triple-slash-reference': ['error', { path: 'always', types: 'prefer-import', lib: 'always' }],
    },
  },
  {
    // What a worker bundles: Hono's `hono/tiny` preset (its PatternRouter alone), never the full
    // `hono` entry, whose routers add about 7 KiB to every bundle (bench/RESULTS.md, bundle sizes).
    files: ['shared/**/*.ts', 'functions/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { paths: [{ name: 'hono', message: "Import Hono from 'hono/tiny' (types from 'hono' are fine).", allowTypeImports: true }] },
      ],
    },
  },
  {
    // The gate's ledger (shared/auth/gate.ts) is the system's own bookkeeping of a call (its trace,
    // refusal and idempotency rows): only the pipeline's claim and the call report write through it.
    // Everything else that writes takes its client from gate.pass().
    files: ['shared/**/*.ts', 'functions/**/*.ts'],
    ignores: ['shared/runtime/pipeline.ts', 'shared/runtime/call-report.ts', 'shared/auth/gate.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[property.name='ledger']",
          message: "Writes take their client from gate.pass(); the ledger is the call report's.",
        },
      ],
    },
  },
  {
    // Tests and benches read JSON answers of many shapes; `any` there is the answer as parsed, checked field by field.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Plain JavaScript run by Node before anything is installed (local/node-version.mjs).
    files: ['**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  prettier,
);
