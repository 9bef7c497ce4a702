import { resolve } from 'node:path'
import type { Toolchain } from '../toolchain.ts'
import { nativeTypecheck } from './check.ts'
import { hasTsProjects } from '../js/workspace-packages.ts'

/**
 * TypeScript 7 (the native compiler): the type-check through a warm
 * `tsc --api` server (or `tsc -b` over shadow configs), its import graph
 * as change impact. Applies when the workspace's own `typescript` is 7 or
 * later; before `typescript` in the list, which then steps aside.
 */
export const typescript7: Toolchain = {
  name: 'typescript7',
  profile: 'typescript',
  contribute({ root, config, claimed }) {
    const configPath = resolve(root, config.tsconfig)
    if (claimed.has('typecheck') || !hasTsProjects(root, configPath)) return undefined
    const typecheck = nativeTypecheck(root, configPath)
    if (!typecheck) return undefined
    claimed.add('typecheck')
    return { checks: [typecheck], impact: [typecheck] }
  },
}
