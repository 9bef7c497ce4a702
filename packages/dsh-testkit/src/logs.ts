import type { Context, LoggerType } from '@deepseek-ai/cordis'
import { format } from 'node:util'

/**
 * The text of every log message of `type` written on `ctx` from now on
 * (placeholders filled), in order — what a plugin warned about. The
 * exporter goes with `ctx`'s fiber.
 *
 * @example
 * const warnings = logged(h.ctx, 'warn')
 * // … the plugin warns …
 * expect(warnings).toContain('…')
 */
export function logged(ctx: Context, type: LoggerType): string[] {
  const texts: string[] = []
  ctx.logger.exporter({ colors: false, levels: { default: 3 }, export: message => { if (message.type === type) texts.push(format(...message.args)) } })
  return texts
}
