import type { Context } from '@deepseek-ai/cordis'
import { HostOptions } from './options.ts'

/**
 * The host's options, as the first child entry of `dsh-host-deepseek`: the
 * host reads them before it loads the suite; this plugin only lets the
 * loader validate and show them.
 */
export const name = 'dsh-host-deepseek/options'
export const Config = HostOptions
export function apply(_ctx: Context, _config: HostOptions): void {}
