import eslint from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['node_modules/**', '.restate-data/**', 'bin/**', 'coverage/**', 'dist/**', 'build/**', 'test/package/consumer/**', 'eslint.config.js'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
      '@typescript-eslint/only-throw-error': 'off',
      '@typescript-eslint/prefer-promise-reject-errors': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
    },
  },
  {
    // Restate handlers and the Restate runtime: what lands in the journal or in state must be the same on every replay.
    // Read time and randomness through the runtime (runtime.now(), runtime.uuid(), ctx.date.now()) or inside a step.
    files: ['services/**/*.ts', 'src/restate/**/*.ts'],
    rules: {
      'no-restricted-properties': ['error',
        { object: 'Date', property: 'now', message: 'Not replay-stable: use the durable clock (runtime.now() / ctx.date.now()), or read it inside a step.' },
        { object: 'Math', property: 'random', message: 'Not replay-stable: use runtime.uuid() / ctx.rand, or draw it inside a step.' },
        { object: 'crypto', property: 'randomUUID', message: 'Not replay-stable: use runtime.uuid() / ctx.rand.uuidv4(), or draw it inside a step.' },
      ],
      'no-restricted-syntax': ['error',
        { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: 'Not replay-stable: use the durable clock (runtime.now() / ctx.date.now()).' },
        { selector: "CallExpression[callee.name='randomUUID']", message: 'Not replay-stable: use runtime.uuid() / ctx.rand.uuidv4().' },
      ],
    },
  },
)
