// Setup for the `dsh dev` specs: a temp project (ESM package with small
// plugins written as files), its own cordis.yml, a scripted model, and a
// started dev harness. Plugins talk to the test through `globalThis` only.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startDev, type DevHarness, type DevOptions, type DevReport } from 'dsh-cli/dev'
import { tempDir, writeScript } from 'dsh-testkit'

/** A tool plugin whose answer is `reply` (the thing a reload changes). */
export function greeterSource(reply: string, extra = ''): string {
  return `interface Tools { register(def: object): () => void }
export const name = 'greeter'
export const inject = ['tools']
${extra}
export function apply(ctx: { tools: Tools }) {
  ctx.tools.register({
    name: 'greet',
    description: 'Say hello.',
    parameters: { type: 'object', properties: {} },
    effects: 'read',
    execute: () => ({ content: ${JSON.stringify(reply)} }),
  })
}
`
}

/**
 * A tool that blocks until the test releases it: `globalThis.__dshGate`
 * holds `{ entered: Promise, release() }` for the current call.
 */
export const GATE_SOURCE = `interface Tools { register(def: object): () => void }
export const name = 'gate'
export const inject = ['tools']
export function apply(ctx: { tools: Tools }) {
  ctx.tools.register({
    name: 'hold',
    description: 'Wait until released.',
    parameters: { type: 'object', properties: {} },
    effects: 'read',
    execute: () => new Promise((resolve) => {
      const gate = (globalThis as { __dshGate?: { enter(): void; wait: Promise<void> } }).__dshGate!
      gate.enter()
      gate.wait.then(() => resolve({ content: 'released' }))
    }),
  })
}
`

/** Counts applies and disposals in `globalThis.__dshCounter[id]`, with its config. */
export function counterSource(tag: string): string {
  return `import { label } from './lib/label.ts'
interface State { applies: number; disposals: number; tags: string[]; configs: unknown[] }
interface Ctx { on(name: string, cb: () => void): () => void; effect(fn: () => () => void): void }
export const name = 'counter'
export function apply(ctx: Ctx, config: { id?: string } = {}) {
  const store = ((globalThis as { __dshCounter?: Record<string, State> }).__dshCounter ??= {})
  const state = (store[config.id ?? 'counter'] ??= { applies: 0, disposals: 0, tags: [], configs: [] })
  state.applies++
  state.tags.push(${JSON.stringify(tag)} + ':' + label())
  state.configs.push(config)
  ctx.on('tools/change', () => {})
  ctx.effect(() => () => { state.disposals++ })
}
`
}

export interface CounterState {
  applies: number
  disposals: number
  tags: string[]
  configs: unknown[]
}

export function counterState(id = 'counter'): CounterState | undefined {
  return (globalThis as { __dshCounter?: Record<string, CounterState> }).__dshCounter?.[id]
}

export interface Gate {
  entered: Promise<void>
  release(): void
}

/** Arm the `hold` tool's gate for its next call. */
export function armGate(): Gate {
  let enter!: () => void
  let release!: () => void
  const entered = new Promise<void>(resolve => { enter = resolve })
  const wait = new Promise<void>(resolve => { release = resolve })
  ;(globalThis as Record<string, unknown>).__dshGate = { enter, wait }
  return { entered, release }
}

export interface DevProject {
  dir: string
  workspace: string
  config: string
  plugins: string
  /** Write a file of the project (path relative to its root). */
  write(path: string, text: string): string
  /** Save like an editor that writes a temp file and renames it over the original. */
  saveByRename(path: string, text: string): string
  read(path: string): string
  /** A JSON Lines scripted model. */
  script(steps: object[]): string
}

/** A temp ESM project with `plugins/`, `workspace/` and a cordis.yml of the given entries. */
export function devProject(entries: string): DevProject {
  const dir = tempDir('dsh-dev-')
  const workspace = join(dir, 'workspace')
  mkdirSync(workspace)
  mkdirSync(join(dir, 'plugins', 'lib'), { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'dev-fixture', private: true, type: 'module' }) + '\n')
  const write = (path: string, text: string) => {
    const file = join(dir, path)
    writeFileSync(file, text)
    return file
  }
  write('cordis.yml', entries)
  return {
    dir,
    workspace,
    config: join(dir, 'cordis.yml'),
    plugins: join(dir, 'plugins'),
    write,
    saveByRename(path, text) {
      const file = join(dir, path)
      writeFileSync(file + '.swp', text)
      renameSync(file + '.swp', file)
      return file
    },
    read: path => readFileSync(join(dir, path), 'utf8'),
    script: steps => writeScript(dir, steps),
  }
}

const started: DevHarness[] = []

/** Close every dev harness {@link startProject} started (`afterEach(closeProjects)`). */
export async function closeProjects(): Promise<void> {
  for (const dev of started.splice(0)) await dev.close()
}

/** Start `dsh dev` in-process on a project; closed by {@link closeProjects}. */
export async function startProject(project: DevProject, options: Partial<DevOptions> = {}): Promise<DevHarness & { logs: string[] }> {
  const logs: string[] = []
  const dev = await startDev({
    config: project.config,
    workspace: project.workspace,
    debounceMs: 40,
    log: line => logs.push(line),
    ...options,
  })
  started.push(dev)
  return Object.assign(dev, { logs })
}

/** Make an edit and wait for the report it causes. */
export async function edit(dev: DevHarness, change: () => void): Promise<DevReport> {
  const next = dev.nextReport()
  change()
  return withTimeout(next, 15_000, 'no reload report after the edit')
}

/** `promise`, or a rejection saying `what` did not happen (computed when the time is up). */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string | (() => string)): Promise<T> {
  let timer!: NodeJS.Timeout
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${typeof what === 'function' ? what() : what} within ${ms} ms`)), ms)
    }),
  ])
}
