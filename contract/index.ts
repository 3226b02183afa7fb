/**
 * The wire contract of the deployment: the names of our Restate services and the state keys other parts read, the
 * inputs and outputs of their handlers, the typed interfaces the gateway's clients are built from, and the live
 * deltas' messages. The services, the gateway, the bench and the tests import it; it imports nothing of the
 * services nor of the gateway, and only types of the library (the session's stored shapes are the library's).
 */
export * from './session'
export * from './event-log'
export * from './admission'
export * from './session-index'
export * from './live-replicas'
export * from './live-delta'
export * from './interfaces'
