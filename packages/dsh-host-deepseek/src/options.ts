import Schema from '@deepseek-ai/schemastery'

/** How one of the harness's tools touches the workspace (`paths` name argument fields). */
export interface ToolEffect {
  effects: 'write' | 'shell'
  /** Argument fields holding a path the call may create, modify or delete. */
  paths?: string[]
  /** For a multi-command tool: the values of `command` that only read. */
  readCommands?: string[]
}

export interface HostOptions {
  vault?: string
  tools: Record<string, ToolEffect>
  harnessVersions: string[]
  source: string
}

/**
 * The harness's file and shell tools (0.1.0-rc.8): `write {file_path, content}`,
 * `edit {file_path, old_string, new_string, replace_all?}`,
 * `str_replace_editor {command, path, …}` and `bash {command, …}`.
 */
export const DEFAULT_TOOLS: Record<string, ToolEffect> = {
  write: { effects: 'write', paths: ['file_path'] },
  edit: { effects: 'write', paths: ['file_path'] },
  str_replace_editor: { effects: 'write', paths: ['path'], readCommands: ['view'] },
  bash: { effects: 'shell' },
}

/** Harness releases this host was built and tested against. */
export const KNOWN_HARNESS_VERSIONS = ['0.1.0-rc.8']

const ToolEffectSchema: Schema<ToolEffect> = Schema.object({
  effects: Schema.union(['write', 'shell'] as const).required(),
  paths: Schema.array(String),
  readCommands: Schema.array(String),
})

export const HostOptions: Schema<Partial<HostOptions>, HostOptions> = Schema.object({
  vault: Schema.string().description('The suite\'s vault (sidecar session logs, snapshots, proof chain, checkpoints); default: `.dsh` in each session\'s workspace.'),
  tools: Schema.dict(ToolEffectSchema).default(DEFAULT_TOOLS).description('The harness\'s tools that write or run commands, with the argument fields that name their paths; every other tool passes through unguarded.'),
  harnessVersions: Schema.array(String).default(KNOWN_HARNESS_VERSIONS).description('DeepSeek Harness versions (`@deepseek-ai/dsh`) to load into; any other version gets one line and no suite plugin.'),
  source: Schema.string().default('dsh-suite').description('The `plugin` name on context messages the suite sends the model.'),
})
