import type { FakeRestate, FakeResponse, RecordedRequest } from './fake-restate'

/** One row of the fake `sys_invocation` table. */
export interface FakeInvocation {
  id: string
  service: 'session' | 'inbox'
  handler: string
  sessionKey: string
  status: string
  idempotencyKey?: string
  invokedById?: string
}

/** How the fake answers a send: `hold` delays the answer after the invocation is already in the table. */
export interface SendBehaviour {
  hold?: Promise<void>
  /** Status of a new `session/<key>/run` (default `suspended`: a run waiting for an answer stays unfinished). */
  runStatus?: string
  /** Whether an `inbox/<key>/add` schedules a `deliver` (default: when the session has no unfinished run or deliver). */
  schedulesDelivery?: boolean
}

/**
 * Restate's ingress and `sys_invocation` as far as the run admission sees them: `run/send` and `add/send` put their
 * invocation in the table before answering (honouring idempotency keys per target, as Restate does); an `add` runs
 * once the send is no longer held: it schedules a `deliver` of an idle session and completes; and `POST /admin/query` answers the admission's SQL with every
 * row of the queried tenant (a superset of what Restate's filter returns) up to its `LIMIT`. Other SQL gets no rows.
 */
export interface FakeInvocations {
  rows: FakeInvocation[]
  behaviour: SendBehaviour
  /** The idempotency key of every send Restate received, in order (undefined: none). */
  sentKeys: Array<string | undefined>
}

/** Installs {@link FakeInvocations} on `restate` (its `otherwise` and `POST /admin/query` routes: the admin API at `/admin`). */
export function fakeInvocations(restate: FakeRestate): FakeInvocations {
  const table: FakeInvocations = { rows: [], behaviour: {}, sentKeys: [] }
  let next = 0
  const newId = (): string => `inv_${++next}`
  const send = async (request: RecordedRequest, service: 'session' | 'inbox', sessionKey: string): Promise<FakeResponse> => {
    const handler = service === 'session' ? 'run' : 'add'
    const key = request.headers['idempotency-key'] as string | undefined
    table.sentKeys.push(key)
    const earlier = table.rows.find(row => row.service === service && row.handler === handler && row.sessionKey === sessionKey && key !== undefined && row.idempotencyKey === key)
    if (earlier) return { status: 200, body: { invocationId: earlier.id, status: 'PreviouslyAccepted' } }
    const row: FakeInvocation = { id: newId(), service, handler, sessionKey, status: service === 'session' ? (table.behaviour.runStatus ?? 'suspended') : 'ready', ...(key === undefined ? {} : { idempotencyKey: key }) }
    table.rows.push(row)
    await table.behaviour.hold
    if (service === 'inbox') runAdd(table, row, newId)
    return { status: 202, body: { invocationId: row.id, status: 'Accepted' } }
  }
  restate.otherwise(async request => {
    const target = /^\/(session|inbox)\/([^/]+)\/(run|add)\/send$/.exec(request.path)
    if (request.method === 'POST' && target) return send(request, target[1] as 'session' | 'inbox', decodeURIComponent(target[2] ?? ''))
    if (request.method === 'GET' && /^\/restate\/invocation\/[^/]+\/attach$/.test(request.path)) return { status: 200, body: {} }
    return { status: 404, body: { message: `fake: no route ${request.method} ${request.path}` } }
  })
  restate.on('POST /admin/query', request => ({ status: 200, body: { rows: answer(table.rows, (request.body as { query: string }).query) } }))
  return table
}

/** The inbox's `add` runs: it schedules a `deliver` of an idle session (queued behind a busy one's run) and completes. */
function runAdd(table: FakeInvocations, add: FakeInvocation, newId: () => string): void {
  const busy = table.rows.some(row => row.service === 'session' && row.sessionKey === add.sessionKey && row.status !== 'completed')
  if (table.behaviour.schedulesDelivery ?? !busy) table.rows.push({ id: newId(), service: 'session', handler: 'deliver', sessionKey: add.sessionKey, status: busy ? 'pending' : 'suspended', invokedById: add.id })
  add.status = 'completed'
}

function answer(rows: readonly FakeInvocation[], query: string): unknown[] {
  const tenant = /target_service_key LIKE '([^']*)%'/.exec(query)?.[1]
  if (!query.includes('FROM sys_invocation') || tenant === undefined) return []
  const ofTenant = rows.filter(row => row.sessionKey.startsWith(tenant))
  const limit = Number(/LIMIT (\d+)/.exec(query)?.[1] ?? Infinity)
  return ofTenant.slice(0, limit).map(row => ({
    id: row.id,
    service: row.service,
    handler: row.handler,
    session_key: row.sessionKey,
    status: row.status,
    ...(row.idempotencyKey === undefined ? {} : { idempotency_key: row.idempotencyKey }),
    ...(row.invokedById === undefined ? {} : { invoked_by_id: row.invokedById }),
  }))
}
