import { register } from 'node:module'
import { MessageChannel, type MessagePort } from 'node:worker_threads'

/**
 * The process-wide version table of watched source files (see `hooks.mjs`).
 * After `bump(files)` resolves, importing any of `files` — directly or via
 * an importer that was bumped with it — evaluates its current source as a
 * new module; modules that were not bumped stay shared.
 */
export interface ModuleVersions {
  /** Give `files` (absolute, real paths) one new version; resolves once later imports see it. */
  bump(files: readonly string[]): Promise<number>
}

const KEY = Symbol.for('dsh-cli/dev/module-versions')
const TSX_KEY = Symbol.for('dsh-cli/dev/tsx-registered')
const ACK_TIMEOUT_MS = 10_000

type Registry = { [KEY]?: ModuleVersions; [TSX_KEY]?: boolean }

/**
 * Make sure `.ts` sources load under Node's ES module loader: a process
 * started by the tsx CLI or with `--import tsx` already has tsx's hooks; any
 * other process (a test worker, a plain `node` script) gets them registered
 * here, once. Call before {@link installModuleVersions} so the version hook
 * runs first and hands the URLs tsx resolved back with their version.
 */
export async function registerTypeScript(): Promise<void> {
  const global = globalThis as Registry
  if (global[TSX_KEY]) return
  const flags = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' ')
  if (!/\btsx\b/.test(flags)) {
    const { register: registerTsx } = await import('tsx/esm/api')
    registerTsx()
  }
  global[TSX_KEY] = true
}

/**
 * Register the version hook (once per process; loader hooks cannot be
 * removed) and return the client that bumps versions.
 */
export function installModuleVersions(): ModuleVersions {
  const global = globalThis as Registry
  if (global[KEY]) return global[KEY]
  const { port1, port2 } = new MessageChannel()
  register(new URL('./hooks.mjs', import.meta.url), { data: { port: port2 }, transferList: [port2] })
  const client = createClient(port1)
  global[KEY] = client
  return client
}

function createClient(port: MessagePort): ModuleVersions {
  let nextId = 0
  const pending = new Map<number, (version: number) => void>()
  port.on('message', (message: { id: number; version: number }) => {
    const settle = pending.get(message.id)
    pending.delete(message.id)
    if (!pending.size) port.unref()
    settle?.(message.version)
  })
  // The port keeps the process alive only while an answer is awaited
  // (after the listener: adding a 'message' listener refs the port).
  port.unref()
  return {
    bump(files) {
      const id = ++nextId
      return new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id)
          if (!pending.size) port.unref()
          reject(new Error(`dsh dev: the module version hook did not answer within ${ACK_TIMEOUT_MS} ms`))
        }, ACK_TIMEOUT_MS)
        pending.set(id, (version) => {
          clearTimeout(timer)
          resolve(version)
        })
        port.ref()
        port.postMessage({ id, files: [...files] })
      })
    },
  }
}
