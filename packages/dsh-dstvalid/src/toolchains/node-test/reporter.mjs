/*
 * A `node --test` reporter (`--test-reporter=<this file>`): one JSON report
 * of every test with its suites, and per test file whether it loaded and
 * what it printed to stderr. Plain JavaScript: Node loads it as is.
 *
 * The report (`NodeTestReport` in check.ts):
 *   { tests: [{ file, titles, name, state: 'pass'|'fail'|'skip', error, line }],
 *     files: [{ file, failed, stderr }] }
 * A test file that did not load is a test named by its own path at nesting
 * 0 that failed (`failed: true`), with the loader's error in `stderr`.
 */
export default async function* nodeTestReport(source) {
  const tests = []
  const files = new Map()
  const stacks = new Map()
  const fileOf = file => {
    let f = files.get(file)
    if (!f) files.set(file, f = { file, failed: false, stderr: '' })
    return f
  }
  for await (const event of source) {
    const data = event.data ?? {}
    if (!data.file) continue
    if (event.type === 'test:stderr') fileOf(data.file).stderr += data.message ?? ''
    else if (event.type === 'test:start') {
      const stack = stacks.get(data.file) ?? []
      stack.length = data.nesting
      stack.push(data.name)
      stacks.set(data.file, stack)
    } else if (event.type === 'test:pass' || event.type === 'test:fail') {
      const details = data.details ?? {}
      const error = details.error
      // A suite passes or fails through its tests; a test that failed only through its subtests is judged by them.
      if (details.type === 'suite' || error?.failureType === 'subtestsFailed') continue
      if (data.nesting === 0 && data.name === data.file) {
        fileOf(data.file).failed = event.type === 'test:fail'
        continue
      }
      const titles = (stacks.get(data.file) ?? []).slice(0, data.nesting)
      const skipped = data.skip !== undefined || data.todo !== undefined
      const cause = error?.cause ?? error
      const text = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause ?? error?.message ?? '')
      tests.push({ file: data.file, titles, name: data.name, state: skipped ? 'skip' : event.type === 'test:pass' ? 'pass' : 'fail',
        error: event.type === 'test:fail' ? text : '', line: data.line })
    }
  }
  yield `${JSON.stringify({ tests, files: [...files.values()] })}\n`
}
