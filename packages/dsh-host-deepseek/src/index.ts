// Entry of the DeepSeek Harness host. This file and the modules it imports
// statically use erasable TypeScript only, so the harness's Node 22 strips
// their types itself. The suite's sources use syntax type stripping refuses
// (parameter properties): inside the harness, tsx's ESM hooks are registered
// before the first of them is imported.
import { register } from 'tsx/esm/api'
import { findHarness } from './harness.ts'

if (findHarness() && !(globalThis as { __dshHostTsx?: boolean }).__dshHostTsx) {
  (globalThis as { __dshHostTsx?: boolean }).__dshHostTsx = true
  register()
}

const { DeepSeekHost } = await import('./host.ts')

export default DeepSeekHost
export { DeepSeekHost }
export { findHarness, unknownHarnessLine, type HarnessInstall } from './harness.ts'
export { DEFAULT_TOOLS, HostOptions, KNOWN_HARNESS_VERSIONS, type ToolEffect } from './options.ts'
export { MirrorState, translateEvent, type MirrorEvent } from './mirror.ts'
