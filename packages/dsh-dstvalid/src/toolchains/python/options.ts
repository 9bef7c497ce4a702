import Schema from '@deepseek-ai/schemastery'

/** The Python toolchain's options (Config keys). */
export const PYTHON_OPTIONS = {
  python: Schema.string().default('').description('Python profile: the interpreter (a command, or a path relative to the workspace); empty: the workspace\'s .venv or venv, else an active VIRTUAL_ENV, else python3.'),
}
