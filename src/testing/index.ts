export { scriptedProvider } from '../providers/scripted-provider'
export type { ScriptedProvider, ScriptedTurn, Script } from '../providers/scripted-provider'
export { createMemoryJournal, createMemoryJournalRuntime, SimulatedCrashError } from '../durable/memory-journal-runtime'
export type { MemoryJournal, MemoryJournalRuntime } from '../durable/memory-journal-runtime'
