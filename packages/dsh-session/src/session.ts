import { join, resolve } from 'node:path'
import { maskCredentialsDeep } from 'dsh-common'
import type { CreateSessionOptions, RawSessionEvent, SessionEvent, SessionEventMap, SessionEventType } from './types.ts'

/** Thrown for misuse of the log (a bad seed). `code` is stable. */
export class SessionError extends Error {
  readonly code = 'SESSION'
}

export interface SessionHost {
  /** Called synchronously after an event is appended. */
  onAppend(session: Session, event: SessionEvent): void
  flush(session: Session): Promise<void>
}

/** An append-only, event-sourced session log. */
export class Session {
  readonly cwd: string
  readonly vault: string
  readonly #events: SessionEvent[] = []
  #nextSeq = 0
  #lastTime = 0

  constructor(readonly id: string, options: CreateSessionOptions, private readonly host: SessionHost) {
    this.cwd = resolve(options.cwd ?? process.cwd())
    this.vault = resolve(options.vault ?? join(this.cwd, '.dsh'))
    // The seed is checked by `checkSeed` after `session/created`, so a
    // contract checker listening there (dsh-invariants) judges it first.
    for (const event of options.seed ?? []) {
      this.#events.push(event as SessionEvent)
      if (Number.isInteger(event.seq)) this.#nextSeq = Math.max(this.#nextSeq, event.seq + 1)
      this.#lastTime = Math.max(this.#lastTime, event.time)
    }
  }

  /** @throws SessionError when the seeded seqs do not strictly increase from 0 upwards. */
  checkSeed(): void {
    let expected = 0
    for (const event of this.#events) {
      if (!Number.isInteger(event.seq) || event.seq < expected) {
        throw new SessionError(`seed of session ${this.id}: seq ${event.seq} does not increase (expected ≥ ${expected})`)
      }
      expected = event.seq + 1
    }
  }

  /** The log so far, oldest first. Do not mutate (dsh-invariants freezes it in dev). */
  get events(): readonly SessionEvent[] {
    return this.#events
  }

  /** Number of events in the log (including seeded ones). */
  get length(): number {
    return this.#events.length
  }

  /** Seq the next appended event will get. */
  get nextSeq(): number {
    return this.#nextSeq
  }

  /**
   * Append an event: assigns `seq` and a non-decreasing `time`, stores it,
   * then emits `session/event` synchronously. A listener that throws
   * (e.g. dsh-invariants) propagates to the caller; the event stays logged.
   * Credential values (of this process's credential-looking environment
   * variables) in `data` are masked first (`maskCredentialsDeep`): the log
   * is what the model is sent and what is written to disk.
   */
  append<K extends SessionEventType>(type: K, data: SessionEventMap[K]): SessionEvent<K> {
    const time = Math.max(Date.now(), this.#lastTime)
    this.#lastTime = time
    const event = { seq: this.#nextSeq++, time, type, data: maskCredentialsDeep(data) } as SessionEvent<K>
    this.#events.push(event as SessionEvent)
    this.host.onAppend(this, event as SessionEvent)
    return event
  }

  /** Events of one type, typed. */
  ofType<K extends SessionEventType>(type: K): SessionEvent<K>[] {
    return this.#events.filter(e => e.type === type) as SessionEvent<K>[]
  }

  /** Await every `session/flush` listener (persistence drains here). */
  flush(): Promise<void> {
    return this.host.flush(this)
  }
}

export type { RawSessionEvent }
