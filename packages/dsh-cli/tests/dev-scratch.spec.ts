import { test } from 'vitest'
test('function import', async () => {
  const nativeImport = new Function('u', 'return import(u)') as (u: string) => Promise<any>
  try { const m = await nativeImport('file:///tmp/dshproto/pkg/a.ts'); console.log('ok', m.a) } catch (e) { console.log('ERR', (e as Error).message) }
  const { register } = await import('tsx/esm/api')
  register()
  try { const m = await nativeImport('file:///tmp/dshproto/pkg/a.ts'); console.log('ok2', m.a) } catch (e) { console.log('ERR2', (e as Error).message) }
})
