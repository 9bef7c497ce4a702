/** TypeScript 7 (native compiler) support: the workspace's `tsc`, its API server, a cold `tsc -b`, our own import scan. */
export { nativeTscCommand, workspaceTypescript, type WorkspaceTypescript } from './install.ts'
export { parseJsonc, projectGraph, referencesOf } from './projects.ts'
export { Tsc7ApiServer, flattenMessage, type MessageChain, type Tsc7Result } from './api.ts'
export { listProgramFiles, parseTscOutput, writeShadowConfigs } from './build.ts'
export { pathMappings, resolveSpecifier, scanImportGraph, scanImports, type PathMapping, type ScannedImport } from './imports.ts'
export { RpcClient, RpcError, RpcGone } from './rpc.ts'
