import { mkdirSync, readFileSync } from 'node:fs'
import { writeFileAtomicSync } from 'dsh-common'
import { hookPaths } from './paths.ts'

/**
 * The workspace's own settings of its host, `<vault>/hooks/settings.json`,
 * read when the host starts. They live in the workspace, not in the
 * environment: the host's environment is whatever the agent gives its hook
 * commands (Codex CLI 0.171 did not pass the user's through), so a file
 * is the one switch that reaches the host under every agent.
 */
export interface HostSettings {
  /** dsh-dstvalid's `background`: false makes each write wait for its whole verdict (default: on). */
  background?: boolean
  /** dsh-dstvalid's `verdicts`: `strict` rolls back every write that makes anything worse at once (default: `turn`). */
  verdicts?: 'turn' | 'strict'
}

/** The settings file's contents, and what in it was not understood (left out, said in the host's log). */
export interface ReadHostSettings {
  settings: HostSettings
  problems: string[]
}

/** Read `<vault>/hooks/settings.json` (absent: no settings). A key it does not know, or a value of the wrong kind, is left out with a problem. */
export function readHostSettings(vault: string): ReadHostSettings {
  const file = hookPaths(vault).settings
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    // ENOENT: the defaults.
    return { settings: {}, problems: [] }
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return { settings: {}, problems: [`${file} is not JSON (${(error as Error).message}); its settings are not applied`] }
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { settings: {}, problems: [`${file} is not a JSON object; its settings are not applied`] }
  const settings: HostSettings = {}
  const problems: string[] = []
  for (const [key, v] of Object.entries(value)) {
    if (key === 'background' && typeof v === 'boolean') settings.background = v
    else if (key === 'verdicts' && (v === 'turn' || v === 'strict')) settings.verdicts = v
    else problems.push(`${file}: ${key}: ${JSON.stringify(v)} is not a setting (background: true | false; verdicts: "turn" | "strict"); left out`)
  }
  return { settings, problems }
}

/** Write `<vault>/hooks/settings.json`; a host already running reads it at its next start. */
export function writeHostSettings(vault: string, settings: HostSettings): void {
  const paths = hookPaths(vault)
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 })
  writeFileAtomicSync(paths.settings, JSON.stringify(settings, null, 2) + '\n')
}

/** The environment cordis.yml reads the settings from (`DSH_BACKGROUND`, `DSH_VERDICTS`), set over what the host inherited. */
export function applyHostSettings(settings: HostSettings, env: NodeJS.ProcessEnv): void {
  if (settings.background !== undefined) env.DSH_BACKGROUND = settings.background ? '1' : '0'
  if (settings.verdicts !== undefined) env.DSH_VERDICTS = settings.verdicts
}
