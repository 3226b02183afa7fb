import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

// `zidane/...` resolves to the TypeScript sources in the tests (the package's `exports` point at the build in dist/).
const sourceFolder = fileURLToPath(new URL('./src', import.meta.url))

export default defineConfig({
  resolve: {
    alias: [
      { find: /^zidane$/, replacement: `${sourceFolder}/index.ts` },
      { find: /^zidane\/(.+)$/, replacement: `${sourceFolder}/$1/index.ts` },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
  },
})
