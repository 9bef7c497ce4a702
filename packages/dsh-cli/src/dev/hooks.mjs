// Module resolve hook for `dsh dev` (registered with `module.register`, runs
// on Node's loader-hooks thread). Plain JavaScript on purpose: this file is
// loaded by the hooks thread itself, before and independently of any
// TypeScript loader, and must work whichever order tsx and it were
// registered in.
//
// Node 20 caches an ES module by its URL for the life of the process. A
// watched file that changed gets a new version number here, and every later
// resolution of it carries `?dshv=N`: a new URL, so a new module instance.
// Resolution itself is delegated (to tsx, then Node): this hook only
// decorates the URL it is handed back.
import { fileURLToPath } from 'node:url'

/** Absolute file path → version of its current source. */
const versions = new Map()
let counter = 0

/**
 * @param {{ port: import('node:worker_threads').MessagePort }} data
 * Messages: `{ id, files }` — give `files` one new version; answered with
 * `{ id, version }` once later resolutions use it.
 */
export function initialize(data) {
  const { port } = data
  port.on('message', (message) => {
    const version = ++counter
    for (const file of message.files) versions.set(file, version)
    port.postMessage({ id: message.id, version })
  })
}

/**
 * @param {string} specifier
 * @param {{ parentURL?: string, conditions: string[] }} context
 * @param {(specifier: string, context?: object) => Promise<{ url: string, format?: string }>} nextResolve
 */
export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context)
  if (!versions.size || !result.url.startsWith('file:')) return result
  const url = new URL(result.url)
  const version = versions.get(fileURLToPath(url))
  if (version === undefined) return result
  url.searchParams.set('dshv', String(version))
  return { ...result, url: url.href }
}
