import { Context, Service } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import { randomUUID } from 'node:crypto'
import { Session, SessionError, type SessionHost } from './session.ts'
import type { CreateSessionOptions, SessionEvent } from './types.ts'

declare module '@deepseek-ai/cordis' {
  interface Context {
    sessions: SessionService
  }
  interface Events {
    /** A session was created (seeded ones arrive with their log). @mode emit */
    'session/created'(session: Session): void
    /** An event was appended to a session's log, synchronously after `append`. @mode emit */
    'session/event'(session: Session, event: SessionEvent): void
    /** Checkpoint: persistence drains its buffers; awaited by the agent at each turn end. @mode parallel */
    'session/flush'(session: Session): Promise<void>
  }
}

/** The `sessions` service: creates and holds session logs. */
export class SessionService extends Service implements SessionHost {
  static Config: Schema<SessionService.Config> = Schema.object({})
  private readonly _sessions = new Map<string, Session>()

  constructor(ctx: Context, _config: SessionService.Config = {}) {
    super(ctx, 'sessions')
  }

  /**
   * Create a session. A `seed` arrives already in the log and emits no
   * `session/event`; later appends continue its seq.
   * @throws SessionError for a duplicate id or a seed whose seq does not increase.
   */
  create(id: string = randomUUID(), options: CreateSessionOptions = {}): Session {
    if (this._sessions.has(id)) throw new SessionError(`session ${id} already exists`)
    const session = new Session(id, options, this)
    this._sessions.set(id, session)
    try {
      this.ctx.emit(this, 'session/created', session)
      session.checkSeed()
    } catch (error) {
      this._sessions.delete(id)
      throw error
    }
    return session
  }

  get(id: string): Session | undefined {
    return this._sessions.get(id)
  }

  list(): Session[] {
    return [...this._sessions.values()]
  }

  onAppend(session: Session, event: SessionEvent): void {
    this.ctx.emit(this, 'session/event', session, event)
  }

  /**
   * Run every `session/flush` listener. A failing one rejects with its own
   * error (several: one error naming each), never with an empty message.
   */
  async flush(session: Session): Promise<void> {
    try {
      await this.ctx.parallel(this, 'session/flush', session)
    } catch (error) {
      if (!(error instanceof AggregateError)) throw error
      const errors = error.errors as unknown[]
      if (errors.length === 1) throw errors[0]
      throw new Error(errors.map(e => (e instanceof Error ? e.message : String(e))).join('; '), { cause: error })
    }
  }
}

export namespace SessionService {
  export interface Config {}
}

export default SessionService
export * from './types.ts'
export * from './session.ts'
export { readSessionLog, sessionLogPath } from './jsonl-store.ts'
