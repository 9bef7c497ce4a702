// A vitest reporter loaded by the workspace's own vitest (`--reporter=<this file>`):
// writes, to the file named by DSH_VITEST_REPORT, every test module with its
// project, every test with its result, and the unhandled errors. Plain
// JavaScript, no imports: it runs inside whatever vitest version the
// workspace has (task-based `onFinished` up to 3.x, `onTestRunEnd` from 3.x on).
// The warm runner (../vitest/server.mjs) builds its answers with `dshReport`.
import { writeFileSync } from 'node:fs'

function errorText(errors) {
  return (errors ?? []).map(e => [e?.name && e?.message && !String(e.message).startsWith(e.name) ? `${e.name}: ${e.message}` : e?.message ?? String(e), e?.frame ?? ''].filter(Boolean).join('\n')).join('\n')
}

function collect(task, titles, out) {
  for (const child of task.tasks ?? []) {
    if (child.type === 'suite') collect(child, [...titles, child.name], out)
    else if (child.type === 'test' || child.type === 'custom') {
      const state = child.result?.state ?? (child.mode === 'skip' || child.mode === 'todo' ? 'skip' : 'none')
      out.push({ titles, name: child.name, state, error: errorText(child.result?.errors), line: child.location?.line, duration: child.result?.duration })
    }
  }
}

export default class DshReporter {
  onInit(vitest) {
    this.vitest = vitest
    // Test locations (the line of each test), on in every version: vitest 1 and 2
    // have the option in their config but not on their command line.
    for (const config of [vitest?.config, ...(vitest?.projects ?? []).map(p => p?.config)]) {
      if (config && typeof config === 'object') config.includeTaskLocation = true
    }
  }

  onFinished(files, errors) {
    if (!this.ended) this.write(files ?? [], errors ?? [])
  }

  onTestRunEnd(modules, errors) {
    this.ended = true
    this.write((modules ?? []).map(m => m.task).filter(Boolean), errors ?? [])
  }

  write(files, errors) {
    const target = process.env.DSH_VITEST_REPORT
    if (!target) return
    writeFileSync(target, JSON.stringify(dshReport(this.vitest?.projects ?? [], files, errors)))
  }
}

/**
 * The report (`DshVitestReport` in check.ts): the config's project names,
 * every file task with its project and tests, the unhandled errors.
 */
export function dshReport(projects, files, errors) {
  const modules = files.map(file => {
    const tests = []
    collect(file, [], tests)
    return { project: file.projectName ?? '', file: file.filepath, state: file.result?.state ?? 'none', error: errorText(file.result?.errors), tests }
  })
  return { projects: projects.map(p => p.name ?? ''), modules, errors: errors.map(e => errorText([e])) }
}
