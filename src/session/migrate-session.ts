import { SessionError } from '../errors/zidane-error'
import { SESSION_SCHEMA_VERSION } from './types'
import type { SessionData } from './types'

/** Brings persisted session data of any earlier schema version up to the current one; refuses newer versions. */
export function migrateSession(data: SessionData): SessionData {
  if (data.schemaVersion > SESSION_SCHEMA_VERSION) {
    throw new SessionError(`Session ${data.id} has schema version ${data.schemaVersion}; this build reads up to ${SESSION_SCHEMA_VERSION}.`, 'session_schema_newer')
  }
  return { ...data, runs: data.runs ?? [], metadata: data.metadata ?? {}, schemaVersion: SESSION_SCHEMA_VERSION }
}
