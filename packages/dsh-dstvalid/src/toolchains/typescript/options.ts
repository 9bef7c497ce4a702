import Schema from '@deepseek-ai/schemastery'

/** The TypeScript toolchain's options (Config keys). */
export const TYPESCRIPT_OPTIONS = {
  tsconfig: Schema.string().default('tsconfig.json').description('tsconfig of the TypeScript profile, relative to the workspace.'),
  typescriptMaxHeapMb: Schema.natural().default(0).description('Heap bound of the type-check worker in MB; 0: Node\'s default.'),
}
