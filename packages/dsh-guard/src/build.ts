/**
 * Builds the distributable `dsh-guard` package into `dist/package/` (ADR
 * 0037) and, with `--pack`, packs it there (`dist/dsh-guard-<version>.tgz`):
 *
 * - `cli.mjs`: src/main.ts bundled with everything it imports except
 *   `typescript` (a dependency: the suite's fallback when a project has none);
 * - `plugin-<name>.mjs`: every plugin cordis.yml names, as entries of the
 *   same build (shared chunks: one Cordis, one dsh-common in the process),
 *   and a `cordis.yml` naming them by file;
 * - `assets/…`: each file a source reaches through `new URL('…',
 *   import.meta.url)` (the hook client, the vitest runner's .mjs files, the
 *   TypeScript worker, bundled), at its repo path, the reference rewritten
 *   to it;
 * - each agent's manifests: the package root is a Claude Code plugin,
 *   `gemini/` a Gemini CLI extension, `codex/` a Codex plugin.
 *
 *   tsx packages/dsh-guard/src/build.ts [--pack]
 *   tsx packages/dsh-guard/src/build.ts --repo-manifests   # rewrite the repo root's manifests
 */
import { execFileSync } from 'node:child_process'
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, type BuildOptions, type Plugin } from 'esbuild'
import { agentManifests, repoManifests } from './manifests.ts'

const here = dirname(fileURLToPath(import.meta.url))
const pkgDir = resolve(here, '..')
const repo = resolve(pkgDir, '../..')
const out = join(pkgDir, 'dist', 'package')

const source = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string; description: string; engines: Record<string, string>; license?: string }
const cliPkg = JSON.parse(readFileSync(join(repo, 'packages/dsh-cli/package.json'), 'utf8')) as { dependencies: Record<string, string> }

/** An entry's plugin name in cordis.yml (every `name:` there is one). */
const PLUGIN_NAME = /^(\s*-?\s*name:\s*)(\S+)\s*$/gm

/** A plugin name of cordis.yml as its bundle entry's file name. */
const entryName = (name: string) => `plugin-${name.replace(/[/@]/g, '-')}`

/** Each `new URL('<relative>', import.meta.url)` in a package source: pointed at `assets/<repo path>`, the file collected. */
function assetRewrite(assets: Set<string>): Plugin {
  return {
    name: 'dsh-assets',
    setup(b) {
      b.onLoad({ filter: /\/packages\/[^/]+\/src\/.*\.ts$/ }, args => {
        const text = readFileSync(args.path, 'utf8')
        const contents = text.replace(/new URL\((['"])(\.{1,2}\/[^'"]+)\1, import\.meta\.url\)/g, (_m, _q, rel: string) => {
          const target = resolve(dirname(args.path), rel)
          assets.add(target)
          return `new URL(${JSON.stringify(`./assets/${assetPath(target)}`)}, import.meta.url)`
        }).replace(/\['\.\/reads-recorder\.mjs', '\.\/calls-recorder\.mjs'\]\.map\(f => fileURLToPath\(new URL\(f, import\.meta\.url\)\)\)/, () => {
          // The one reference made through a variable: the recorders beside the vitest check.
          const files = ['./reads-recorder.mjs', './calls-recorder.mjs'].map(f => resolve(dirname(args.path), f))
          for (const f of files) assets.add(f)
          return `[${files.map(f => `fileURLToPath(new URL(${JSON.stringify(`./assets/${assetPath(f)}`)}, import.meta.url))`).join(', ')}]`
        })
        return { contents, loader: 'ts' }
      })
    },
  }
}

/** Where an asset goes under `assets/`: its repo path; a TypeScript entry as its bundle. */
function assetPath(file: string): string {
  return relative(repo, file).replace(/\.ts$/, '.mjs')
}

const common: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['typescript'],
  logLevel: 'warning',
  // CommonJS dependencies inside an ES module bundle call `require`.
  banner: { js: "import { createRequire as __dshRequire } from 'node:module'; const require = __dshRequire(import.meta.url);" },
  legalComments: 'linked',
  outExtension: { '.js': '.mjs' },
}

/** The repository's own manifests (a marketplace listing the package, a Gemini CLI extension), written at its root. */
function writeRepoManifests(): void {
  for (const [file, text] of Object.entries(repoManifests(source.version, source.description))) {
    mkdirSync(dirname(join(repo, file)), { recursive: true })
    writeFileSync(join(repo, file), text)
  }
}

async function main(): Promise<void> {
  if (process.argv.includes('--repo-manifests')) return writeRepoManifests()
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })

  // The plugins of the repo's harness, each an entry.
  const yml = readFileSync(join(repo, 'cordis.yml'), 'utf8')
  const resolveFrom = createRequire(join(repo, 'packages/dsh-cli/package.json'))
  const plugins = [...new Set([...yml.matchAll(PLUGIN_NAME)].map(m => m[2]!))]
  const entryPoints: Record<string, string> = { cli: join(pkgDir, 'src/main.ts') }
  for (const name of plugins) entryPoints[entryName(name)] = resolveFrom.resolve(name)

  const assets = new Set<string>()
  await build({ ...common, entryPoints, outdir: out, splitting: true, entryNames: '[name]', chunkNames: 'chunk-[hash]', plugins: [assetRewrite(assets)] })

  // cordis.yml with each plugin named by its bundle (relative to the file), the rest as in the repo's.
  const cordis = yml.replace(PLUGIN_NAME, (_m, head: string, name: string) => `${head}../${entryName(name)}.mjs`)
  for (const file of assets) {
    const to = join(out, 'assets', assetPath(file))
    mkdirSync(dirname(to), { recursive: true })
    if (file === join(repo, 'cordis.yml')) writeFileSync(to, cordis)
    else if (file === join(repo, 'packages/dsh-cli/bin/dsh.mjs')) writeFileSync(to, `#!/usr/bin/env node\n// What the hook client and the installer start: the guard's own command.\nawait import(${JSON.stringify(relative(dirname(to), join(out, 'cli.mjs')))})\n`)
    else if (file.endsWith('.ts')) await build({ ...common, entryPoints: [file], outfile: to, plugins: [assetRewrite(assets)] })
    else if (file.endsWith('package.json')) writeFileSync(to, JSON.stringify({ version: source.version, engines: source.engines }) + '\n')
    else copyFileSync(file, to)
    // The .mjs files import their neighbours (server.mjs: reporter.mjs, reads.mjs): the whole directory goes.
    if (file.endsWith('.mjs') && !file.startsWith(join(repo, 'packages/dsh-cli'))) {
      for (const f of readdirSync(dirname(file)).filter(f => f.endsWith('.mjs'))) copyFileSync(join(dirname(file), f), join(dirname(to), f))
    }
  }
  const client = join(out, 'assets/packages/dsh-host-hooks/bin/dsh-hook')
  if (!existsSync(client)) throw new Error('the hook client was not collected')
  chmodSync(client, 0o755)
  writeFileSync(join(out, 'cli.mjs'), `#!/usr/bin/env node\n${readFileSync(join(out, 'cli.mjs'), 'utf8')}`)
  chmodSync(join(out, 'cli.mjs'), 0o755)

  writeFileSync(join(out, 'package.json'), JSON.stringify({
    name: 'dsh-guard',
    version: source.version,
    description: source.description,
    type: 'module',
    bin: { 'dsh-guard': 'cli.mjs', 'dsh-guard-hook': 'hook' },
    engines: source.engines,
    ...(source.license ? { license: source.license } : {}),
    dependencies: { typescript: cliPkg.dependencies.typescript },
    keywords: ['claude-code', 'codex', 'gemini-cli', 'hooks', 'coding-agent', 'verification'],
  }, null, 2) + '\n')
  cpSync(join(pkgDir, 'README.md'), join(out, 'README.md'))
  for (const [file, text] of Object.entries(agentManifests(source.version, source.description))) {
    mkdirSync(dirname(join(out, file)), { recursive: true })
    writeFileSync(join(out, file), text)
    if (file === 'hook' || file.endsWith('/hook')) chmodSync(join(out, file), 0o755)
  }
  // A marketplace of this build beside it: `claude plugin marketplace add packages/dsh-guard/dist` before the package is on npm.
  mkdirSync(join(pkgDir, 'dist/.claude-plugin'), { recursive: true })
  writeFileSync(join(pkgDir, 'dist/.claude-plugin/marketplace.json'), JSON.stringify({
    name: 'dsh-local', owner: { name: 'dsh verification suite' },
    plugins: [{ name: 'dsh-guard', description: source.description, version: source.version, source: './package' }],
  }, null, 2) + '\n')
  process.stdout.write(`built ${relative(process.cwd(), out)} (${plugins.length} plugins, ${assets.size} assets)\n`)
  if (process.argv.includes('--pack')) {
    const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', join(pkgDir, 'dist')], { cwd: out, encoding: 'utf8' }).trim().split('\n').at(-1)!
    process.stdout.write(`${join(pkgDir, 'dist', name)}\n`)
  }
}

await main()
