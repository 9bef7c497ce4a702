// Placeholder while this plugin is being written (not done).
import type { Context } from '@deepseek-ai/cordis'
export function apply(_ctx: Context) {}
