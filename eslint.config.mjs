// The linter of `npm test` (issue 29): the rules catch what the structure review found by hand.
// Type-aware rules (floating promises) need the TypeScript program, so the configs name tsconfig.test.json.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'templates/**', 'test/unit/golden/**', '**/*.cjs', '**/*.mjs'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { project: ['./tsconfig.test.json'], tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A promise nobody awaits or catches loses its error (an unhandled rejection ends the process).
      '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: true }],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      'no-constant-condition': ['error', { checkLoops: false }],
      'no-debugger': 'error',
      'no-dupe-keys': 'error',
      'no-self-compare': 'error',
      'no-unreachable': 'error',
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-control-regex': 'error',
    },
  },
  {
    // Long functions are where the review found closures that should be classes or modules (tests' describe blocks are lists).
    files: ['src/**/*.ts'],
    rules: {
      'max-lines-per-function': ['warn', { max: 100, skipBlankLines: true, skipComments: true }],
      // knip takes `(await import('./m.js')).name` as a use of every export of m.js, so unused ones go unreported;
      // `import('./m.js').then((m) => m.name)` or `const { name } = await import('./m.js')` name what is used.
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.type='AwaitExpression'][object.argument.type='ImportExpression'][object.argument.source.value=/^\\./]",
          message:
            "write import('./m.js').then((m) => m.name) or const { name } = await import('./m.js'): knip cannot see which export (await import(…)).name uses",
        },
      ],
    },
  },
);
