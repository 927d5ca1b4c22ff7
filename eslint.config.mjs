// Lint: typescript-eslint's recommended type-checked rules over src/, test/ and scripts/ (npm test runs it; it must be clean).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'media/**', 'node_modules/**', '.vscode-test/**', 'test/fixtures/**', '**/*.js'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // A leading underscore names what is taken apart only to be left out (`const { secret: _s, ...rest } = x`).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
    },
  },
  {
    // The scripts, e2e and harness are JavaScript, typed from JSDoc and inference by their own project
    // (tsconfig.mjs.json). What they require from out/ and JSON.parse is `any` there, so the no-unsafe-* rules would
    // flag every use of it; the others (floating promises, awaits, templates…) hold as for TypeScript.
    files: ['**/*.mjs', '**/*.cjs'],
    languageOptions: { parserOptions: { projectService: false, project: './tsconfig.mjs.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  // A CommonJS preload (scripts/benchUsage.cjs) requires as CommonJS does.
  { files: ['**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
