// The few rules that matter here (issue: one shape for every plugin):
// no import cycles, no floating promises. Unused exports are knip's job
// (`pnpm lint` runs both); style is not linted.
import tseslint from 'typescript-eslint'
import importX from 'eslint-plugin-import-x'
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript'

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/fixtures/**', 'examples/**', '**/*.d.ts', 'packages/*/dist/**'] },
  {
    files: ['packages/*/src/**/*.ts', 'packages/*/src/**/*.tsx', 'scripts/**/*.ts', 'bench/**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin, 'import-x': importX },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: 'tsconfig.json' })],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      '@typescript-eslint/no-floating-promises': 'error',
    },
  },
)
