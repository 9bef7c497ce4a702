/**
 * dsh-dstvalid: per-edit guard latency on a library-sized generated project
 * (bench/dstvalid-library.ts: naive, today's guard, the warm guard, the floor,
 * side by side), then the TypeScript 7 rows (bench/dstvalid-ts7.ts).
 *
 *   tsx bench/dstvalid.bench.ts
 *   DSH_BENCH_EDITS=6 DSH_BENCH_CLI_EDITS=4 DSH_BENCH_NAIVE_EDITS=1 tsx bench/dstvalid.bench.ts
 *   DSH_BENCH_TS=7 tsx bench/dstvalid.bench.ts      # TypeScript 7 rows only
 *   DSH_BENCH_TS=5 tsx bench/dstvalid.bench.ts      # the workspace-TypeScript rows only
 */
import { runLibraryBench } from './dstvalid-library.ts'
import { runTs7Bench } from './dstvalid-ts7.ts'

if (process.env.DSH_BENCH_TS !== '7') await runLibraryBench()
if (process.env.DSH_BENCH_TS !== '5') await runTs7Bench()
