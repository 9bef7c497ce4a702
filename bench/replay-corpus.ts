/**
 * The corpus of `pnpm bench replay`: real multi-file commits of fetched
 * projects, each pinned by its full hash, replayed one file per call in the
 * order a model writes them (what a file defines or exports before the files
 * that use it; tests last), and real bug fixes reverted (the fix's tests
 * kept, its source written back as it was before the fix). Nothing of the
 * projects is copied here: only their names, commit hashes and paths.
 */

export type ReplayLanguage = 'typescript' | 'go'

export interface ReplayItem {
  /** `good`: the commit as its author made it, every write must be kept by the end of the turn; `bug`: the fix reverted, the bug must not survive the turn. */
  kind: 'good' | 'bug'
  /** Full hash of the commit (for `bug`: the fix). */
  commit: string
  /** What the commit does, as its message says. */
  title: string
  /**
   * The files the model writes, in order, one per call. `good`: every file
   * the commit changes; `bug`: the fix's non-test files, written as they were
   * in the fix's parent. Checked against the commit's own diff.
   */
  order: string[]
}

export interface ReplayProject {
  /** `--project` name. */
  name: string
  /** GitHub owner/name. */
  repo: string
  language: ReplayLanguage
  /** What the project is, briefly. */
  about: string
  /** Commands run after each install (generated sources the project's README makes), with the project's package manager in front. */
  prepare?: string[][]
  items: ReplayItem[]
}

export const REPLAY_PROJECTS: ReplayProject[] = [
  {
    name: 'defu',
    repo: 'unjs/defu',
    language: 'typescript',
    about: 'a small TypeScript library (pnpm, vitest)',
    items: [
      {
        kind: 'good',
        commit: 'e922a16af0c58b76a6f92e3d686e7160acc352ee',
        title: 'refactor: move `isPlainObject` to `_utils` to allow testing',
        order: ['src/_utils.ts', 'src/defu.ts'],
      },
      {
        kind: 'good',
        commit: '1b9fcab2c1479f0295a5f867c6ec36a01fda2dfb',
        title: 'fix: merge objects with `Module` type (#121)',
        order: ['src/_utils.ts', 'test/fixtures/nested.ts', 'test/fixtures/index.ts', 'test/defu.test.ts'],
      },
      {
        kind: 'bug',
        commit: '11ba02213d4b1c6b02dd686041f75edc479c98e9',
        title: 'fix: ignore inherited enumerable properties',
        order: ['src/defu.ts'],
      },
    ],
  },
  {
    name: 'ts-graphviz',
    repo: 'ts-graphviz/ts-graphviz',
    language: 'typescript',
    about: 'a pnpm workspace monorepo (6 packages; a root tsconfig maps each package to its src, one root vitest)',
    prepare: [['-r', 'codegen']],
    items: [
      {
        kind: 'good',
        commit: '0bbfc4b9b75a148a7befa38de56e708c6b50e534',
        title: 'fix: prevent Builder nodeCount accumulation across fromModel/toDot calls (#1566)',
        order: [
          'packages/ast/src/builder/create-element.ts',
          'packages/ast/src/model-shim/from-model/types.ts',
          'packages/ast/src/model-shim/from-model/converter.ts',
          'packages/ast/src/model-shim/from-model/plugins/utils/convert-attribute.ts',
          'packages/ast/src/model-shim/from-model/plugins/utils/convert-comment.ts',
          'packages/ast/src/model-shim/from-model/plugins/utils/convert-cluster-children.ts',
          'packages/ast/src/model-shim/from-model/plugins/AttributeListPlugin.ts',
          'packages/ast/src/model-shim/from-model/plugins/EdgePlugin.ts',
          'packages/ast/src/model-shim/from-model/plugins/GraphPlugin.ts',
          'packages/ast/src/model-shim/from-model/plugins/NodePlugin.ts',
          'packages/ast/src/model-shim/from-model/plugins/SubraphPlugin.ts',
          '.changeset/fix-builder-nodecount-accumulation.md',
          'packages/ast/src/builder/create-element.test.ts',
          'packages/ast/src/model-shim/from-model/plugins/utils/convert-attribute.test.ts',
          'packages/ast/src/model-shim/from-model/from-model.test.ts',
          'test/issue.test.ts',
        ],
      },
      {
        kind: 'bug',
        commit: '4296b4e0cf17f36cc385c2ce93ec7ec89bd4a73a',
        title: 'fix(ast): add null byte sanitization … for DOT injection prevention (#1536)',
        order: ['packages/ast/src/dot-shim/printer/plugins/utils/escape.ts'],
      },
    ],
  },
  {
    name: 'chi',
    repo: 'go-chi/chi',
    language: 'go',
    about: 'a Go module (the router and its middleware package)',
    items: [
      {
        kind: 'good',
        commit: '1089a7c69556f7dae6b0219dfea02662c92334a4',
        title: 'Add `Find` to `Routes` interface (#872)',
        order: ['chi.go', 'mux.go', 'mux_test.go'],
      },
      {
        kind: 'good',
        commit: '1f927a8ec868a307ad892b454d2aacfab463d5d0',
        title: 'Ability to specify response HTTP status code for Throttle middleware (#571)',
        order: ['middleware/throttle.go', 'middleware/throttle_test.go'],
      },
      {
        kind: 'bug',
        commit: '6ceb498b221efa11f559602beb2463b8b52c2161',
        title: 'Fix `Mux.Find` not correctly handling nested routes (#954)',
        order: ['mux.go'],
      },
      {
        kind: 'bug',
        commit: '6fedde2a70dc2adce0a3dc41b8aebc0b2bec8185',
        title: 'Make Context.RoutePattern() nil-safe (#927)',
        order: ['context.go'],
      },
    ],
  },
]
