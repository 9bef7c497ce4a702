import type { Context } from '@deepseek-ai/cordis'

/**
 * Listener counts per event name on a Context — the leak check of a
 * lifecycle test: take them before loading a fiber and compare after
 * disposing it. With `names`, exactly those (0 where none); without, every
 * event that has at least one listener.
 */
export function listenerCounts(ctx: Context, names?: readonly string[]): Record<string, number> {
  const hooks = ctx.events._hooks as Record<string, readonly unknown[] | undefined>
  if (names) return Object.fromEntries(names.map(name => [name, hooks[name]?.length ?? 0]))
  return Object.fromEntries(Object.entries(hooks).map(([name, list]) => [name, list?.length ?? 0] as const).filter(([, n]) => n > 0))
}
