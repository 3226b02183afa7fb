import { describe, expect, it } from 'vitest'
import type { Descriptor } from '@restatedev/restate-sdk-core'
import { eventLogInterface, eventWatchInterface, inboxInterface, resumerInterface, sessionIndexInterface, sessionInterface } from '../../contract/interfaces'

/** The handlers an interface declares, with their shared flag: `name:shared` or `name:exclusive`. */
function handlersOf(descriptor: Descriptor, names?: readonly string[]): string[] {
  return Object.entries(descriptor._handlers)
    .filter(([name]) => names === undefined || names.includes(name))
    .map(([name, handler]) => `${name}:${handler._shared === true ? 'shared' : 'exclusive'}`)
    .sort()
}

describe('the service interfaces callers use', () => {
  it('name handlers the implementations serve, with the same kind (shared or exclusive)', async () => {
    const { createServices } = await import('../../services/composition')
    const { loadServicesConfig } = await import('../../services/config')
    const { definitions } = createServices(loadServicesConfig({}), { env: {} })
    const sessionObject = definitions.find(definition => definition.name === sessionInterface.name)
    const sessionIndexObject = definitions.find(definition => definition.name === sessionIndexInterface.name)
    const { inboxObject } = await import('../../services/inbox/inbox-object')
    const { resumerObject } = await import('../../services/resumer/resumer-object')
    const { eventLogObject, eventWatchService } = await import('../../services/event-log/event-log-object')
    const pairs: Array<[Descriptor, Descriptor]> = [
      [sessionInterface, sessionObject as unknown as Descriptor],
      [inboxInterface, inboxObject as unknown as Descriptor],
      [resumerInterface, resumerObject as unknown as Descriptor],
      [eventLogInterface, eventLogObject as unknown as Descriptor],
      [eventWatchInterface, eventWatchService as unknown as Descriptor],
      [sessionIndexInterface, sessionIndexObject as unknown as Descriptor],
    ]
    for (const [declared, implemented] of pairs) {
      expect(implemented.name).toBe(declared.name)
      expect(implemented._kind).toBe(declared._kind)
      const names = Object.keys(declared._handlers)
      expect(handlersOf(implemented, names), declared.name).toEqual(handlersOf(declared))
    }
  })
})
