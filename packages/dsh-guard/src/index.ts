/**
 * dsh-guard — the distributable guard (see ../README.md). Its library
 * surface: the agents' manifests the build writes into the package and at
 * the repository root.
 */
export { agentManifests, repoManifests } from './manifests.ts'
