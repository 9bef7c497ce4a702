import Schema from '@deepseek-ai/schemastery'

/** The plugin's options; the tools take them from here (a leaf module: no cycle with the entry). */
export const Config = Schema.object({
  bashTimeoutMs: Schema.natural().default(120_000).description('bash: milliseconds before the whole process group is killed.'),
  bashMaxOutputBytes: Schema.natural().default(32_768).description('bash: cap on combined output kept in the result, in bytes.'),
  readMaxBytes: Schema.natural().default(262_144).description('read_file: cap on returned content, in bytes.'),
  bashEnvAllow: Schema.array(String).default([]).description('bash: credential-looking environment variables (…KEY, …TOKEN…, …SECRET…, …PASSWORD…, …AUTH…) a command may still see; all others are removed from its environment.'),
})
export type Config = Schemastery.TypeT<typeof Config>
