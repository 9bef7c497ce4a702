import { Context } from '@deepseek-ai/cordis'
import SessionService from 'dsh-session'
import * as jsonl from 'dsh-session/jsonl'
import ToolService from 'dsh-tools'
import { Bridge, type CreateUserMessage } from './bridge.ts'
import type { DsSessions, DsTools } from './deepseek-types.ts'
import { findHarness, importFromHarness, unknownHarnessLine, type HarnessInstall } from './harness.ts'
import { HostOptions, KNOWN_HARNESS_VERSIONS } from './options.ts'

/** A child entry of the host, as the harness's loader keeps it (`cordis.patch.yml` rows). */
export interface HostEntry {
  id?: string
  name: string
  config?: unknown
  disabled?: unknown
  [key: string]: unknown
}

/** The loader's view of a list of child entries (`EntryGroup` of `@deepseek-ai/cordis-plugin-loader`). */
interface EntryGroupLike {
  update(entries: HostEntry[]): Promise<void>
  stop(): Promise<void>
}
type EntryGroupClass = new (ctx: Context, tree: object) => EntryGroupLike
interface EntryTreeLike {
  import(name: string, getOuterStack?: unknown): Promise<unknown>
}
interface LoaderLike {
  root: { constructor: EntryGroupClass }
}
interface HostFiber {
  entry?: { subgroup?: unknown; parent: { tree: EntryTreeLike } }
}

interface ScopeModule {
  createScope(ctx: Context, key: symbol): { ctx: Context; dispose(): Promise<void> }
}
interface MessageModule {
  createUserMessage: CreateUserMessage
}

const GROUP = Symbol.for('cordis.group')
const INIT = Symbol.for('cordis.init')
const OPTIONS_PLUGIN = 'dsh-host-deepseek/options'

/** Resolve a child plugin's name from this package first, so the suite loads from this repository. */
function resolveChild(name: string): string {
  if (name.startsWith('.') || name.startsWith('@deepseek-ai/') || name.includes(':')) return name
  try {
    return import.meta.resolve(name)
  } catch {
    // Not one of ours: the harness resolves it from the profile as usual.
    return name
  }
}

/** Read the host's options from its `dsh-host-deepseek/options` child entry (literal values only). */
function hostOptionsOf(entries: readonly HostEntry[]): HostOptions {
  const row = entries.find(e => e.name === OPTIONS_PLUGIN)
  return HostOptions((row?.config ?? {}) as Partial<HostOptions>)
}

/**
 * The DeepSeek Harness host: a loader group whose child entries (the suite's
 * plugins, each by name, each with its own id the patch layer can disable)
 * see facades of `sessions` and `tools` with this suite's contracts instead
 * of the harness's services of the same names.
 */
export class DeepSeekHost {
  static readonly [GROUP] = true
  static readonly inject = ['loader', 'sessions', 'tools']
  static readonly name = 'dsh-host-deepseek'

  private group?: EntryGroupLike
  private scope?: { dispose(): Promise<void> }
  private readonly ctx: Context
  private entries: HostEntry[]

  constructor(ctx: Context, entries: HostEntry[] | undefined) {
    this.ctx = ctx
    this.entries = entries ?? []
    const on = ctx.on as unknown as (name: string, listener: (entries: HostEntry[]) => unknown) => () => void
    on('internal/update', (next) => {
      this.entries = next ?? []
      return this.group?.update(this.entries)
    })
  }

  async *[INIT](): AsyncGenerator<() => Promise<void>, void, unknown> {
    yield () => this.stop()
    await this.start()
  }

  private async start(): Promise<void> {
    let options: HostOptions
    try {
      options = hostOptionsOf(this.entries)
    } catch (error) {
      process.stderr.write(`dsh-host-deepseek: bad options (${(error as Error).message}); no suite plugin loaded\n`)
      return
    }
    const harness = findHarness()
    if (!harness || !options.harnessVersions.includes(harness.version)) {
      process.stderr.write(unknownHarnessLine(harness, options.harnessVersions.length ? options.harnessVersions : KNOWN_HARNESS_VERSIONS) + '\n')
      return
    }
    const inner = await this.suiteScope(harness)
    await inner.plugin(SessionService)
    await inner.plugin(ToolService)
    await inner.plugin(jsonl, { intervalMs: 1000 })
    const { createUserMessage } = await importFromHarness<MessageModule>(harness, '@deepseek-ai/dsh-llm/message')
    new Bridge({
      outer: this.ctx,
      inner,
      realSessions: this.ctx.get('sessions') as unknown as DsSessions,
      realTools: this.ctx.get('tools') as unknown as DsTools,
      sessions: inner.get('sessions') as SessionService,
      tools: inner.get('tools') as ToolService,
      options,
      createUserMessage,
    }).attach()
    this.group = this.childGroup(inner)
    await this.group.update(this.entries)
  }

  /**
   * A context where `sessions` and `tools` name the suite's facades, and which
   * carries a harness scope key of its own: the harness's scope-filtered
   * events (its session, agent and tool events) never reach the suite's
   * listeners there, whose shapes they would not match.
   */
  private async suiteScope(harness: HarnessInstall): Promise<Context> {
    const { createScope } = await importFromHarness<ScopeModule>(harness, '@deepseek-ai/dsh-scope')
    const scope = createScope(this.ctx.isolate('sessions').isolate('tools'), Symbol('dsh-suite'))
    this.scope = scope
    return scope.ctx
  }

  private childGroup(inner: Context): EntryGroupLike {
    const loader = this.ctx.get('loader') as unknown as LoaderLike
    const fiber = this.ctx.fiber as unknown as HostFiber
    const tree = fiber.entry!.parent.tree
    const ours = Object.create(tree, {
      import: { value(this: EntryTreeLike, name: string, getOuterStack?: unknown) { return tree.import.call(this, resolveChild(name), getOuterStack) } },
    }) as object
    const group = new loader.root.constructor(inner, ours)
    if (fiber.entry) fiber.entry.subgroup = group
    return group
  }

  private async stop(): Promise<void> {
    await this.group?.stop()
    this.group = undefined
    await this.scope?.dispose()
    this.scope = undefined
  }
}
