import { commentOnly } from './body-edit.ts'
import { onlyComments } from '../only-comments.ts'
import type { Change } from '../../types.ts'

/** TypeScript sources (declaration files too): in them no comment is a type (JSDoc types count only in JavaScript, under `checkJs`). */
const TYPESCRIPT = /\.[cm]?tsx?$/

/** Scripts a JavaScript test runner loads (and TypeScript's declaration files, which it never runs). */
const SCRIPT = /\.[cm]?[jt]sx?$/

/**
 * Why a write cannot change what a script's tests report — it changed
 * nothing but comments and whitespace (directives count as code: see
 * `commentOnly`) in existing scripts — or undefined when it may. What a test
 * sees of a comment is only the text a few read as a file, and line numbers.
 */
export function testsUnchanged(change: Change): Promise<string | undefined> {
  return onlyComments(change, SCRIPT, commentOnly)
}

/**
 * Why a write cannot change what a type-check reports — it changed nothing
 * but comments and whitespace, and only in TypeScript sources (directive
 * comments such as `@ts-expect-error` or `/// <reference>` count as code:
 * see `commentOnly`) — or undefined when it may (a JavaScript file, a
 * created or deleted file, content not known from before the write).
 */
export function typesUnchanged(change: Change): Promise<string | undefined> {
  return onlyComments(change, TYPESCRIPT, commentOnly)
}
