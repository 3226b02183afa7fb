/* global setTimeout, clearTimeout */
import { api, sessionPath } from './api.js'
import { formatCost, formatTime, formatTotals, h, statusBadge } from './dom.js'
import { followEvents } from './event-stream.js'
import { PendingPanel } from './pending-panel.js'
import { Transcript } from './transcript.js'

/** How often the session's record is read again while a run is active (questions, approvals, status, costs). */
const POLL_MS = 1_500
const ACTIVE = new Set(['running', 'waiting', 'suspended'])

/**
 * The session view: status, actions (cancel, delete), what waits for an answer, the live transcript, the runs with
 * their usage, cost and trace id, and a steering box. Returns the element and a `dispose` that stops its stream.
 * @param {string} sessionId
 * @param {(hash: string) => void} navigate
 */
export function sessionView(sessionId, navigate) {
  /** Aborts the view's reads (its event stream, a refresh in flight): when it closes, and before a delete. */
  let reads = new AbortController()
  const transcript = new Transcript()
  const pending = new PendingPanel(() => refreshSoon())
  const status = h('span', {}, statusBadge('…'))
  const usage = h('p', { class: 'muted', dataset: { testid: 'usage' } })
  const runs = h('tbody', {})
  const notice = h('p', { class: 'notice', role: 'alert', hidden: true })
  const connection = h('span', { class: 'muted', dataset: { testid: 'connection' } }, 'connecting…')
  let current = undefined
  let timer = undefined

  const show = message => { notice.textContent = message; notice.hidden = message === '' }
  const act = async (label, call) => {
    show('')
    try {
      await call()
    } catch (error) {
      show(`${label} failed: ${error.message}`)
    }
  }

  const cancel = h('button', { type: 'button', disabled: true, dataset: { testid: 'cancel' }, onclick: () => act('Cancel', async () => {
    await api(sessionPath(sessionId, '/cancel'), { method: 'POST' })
    refreshSoon()
  }) }, 'Cancel run')
  const confirmDelete = h('span', { class: 'confirm', hidden: true },
    h('span', {}, 'Delete this session and everything it holds? '),
    h('button', { type: 'button', class: 'danger', dataset: { testid: 'confirm-delete' }, onclick: () => act('Delete', async () => {
      const active = current !== undefined && ACTIVE.has(current.status)
      // No read of the session may land after it is gone (a 404 the browser would log as an error).
      stopReads()
      try {
        await api(sessionPath(sessionId, active ? '?cancel=true' : ''), { method: 'DELETE' })
      } catch (error) {
        follow()
        throw error
      }
      navigate(`#/?deleted=${encodeURIComponent(sessionId)}`)
    }) }, 'Delete session'),
    h('button', { type: 'button', onclick: () => { confirmDelete.hidden = true; deleteButton.focus() } }, 'Keep'))
  const deleteButton = h('button', { type: 'button', dataset: { testid: 'delete' }, onclick: () => { confirmDelete.hidden = false; confirmDelete.querySelector('button')?.focus() } }, 'Delete…')

  const steerText = h('textarea', { rows: 2, required: true, placeholder: 'Message the agent (Enter sends, Shift+Enter for a new line)', 'aria-label': 'Message', dataset: { testid: 'steer-input' } })
  const steerForm = h('form', { class: 'steer-form', onsubmit: event => { event.preventDefault(); void sendMessage() } },
    steerText, h('button', { type: 'submit', class: 'primary', dataset: { testid: 'steer-send' } }, 'Send'))
  steerText.addEventListener('keydown', event => submitOnEnter(event, steerForm))
  const sendMessage = () => act('Send', async () => {
    const text = steerText.value.trim()
    if (text === '') return
    await api(sessionPath(sessionId, '/messages'), { method: 'POST', body: { text } })
    steerText.value = ''
    refreshSoon()
  })

  const render = view => {
    current = view
    status.replaceChildren(statusBadge(view.status))
    cancel.disabled = !ACTIVE.has(view.status)
    usage.textContent = `All runs: ${formatTotals(view.usage)} · ${view.counts?.turns ?? 0} turns`
    pending.update(view.pending)
    transcript.setRunRecords(view.runs)
    runs.replaceChildren(...(view.runs ?? []).map(runRow))
  }
  const refresh = async () => {
    const signal = reads.signal
    if (signal.aborted) return
    try {
      render(await api(sessionPath(sessionId), { signal }))
    } catch (error) {
      if (signal.aborted) return
      show(error.status === 404 ? `Session ${sessionId} not found for this API key.` : `Could not read the session: ${error.message}`)
    }
    clearTimeout(timer)
    if (!signal.aborted && current && ACTIVE.has(current.status)) timer = setTimeout(refresh, POLL_MS)
  }
  const stopReads = () => { reads.abort(); clearTimeout(timer); clearTimeout(soon) }
  const interesting = new Set(['run:start', 'run:end', 'question', 'tool:start', 'tool:end', 'child:end', 'steer'])
  let lastSeq = 0
  /** Reads the session, then follows its events from the last one seen (again after a delete that failed). */
  const follow = () => {
    reads = new AbortController()
    const signal = reads.signal
    void refresh().then(() => {
      if (!current || signal.aborted) return
      void followEvents(sessionId, event => {
        if (typeof event.seq === 'number') lastSeq = event.seq
        transcript.apply(event)
        if (interesting.has(event.type)) refreshSoon()
      }, signal, connected => { connection.textContent = connected ? 'live' : 'reconnecting…' }, lastSeq)
    })
  }
  let soon = undefined
  const refreshSoon = () => { clearTimeout(soon); soon = setTimeout(refresh, 150) }

  const element = h('div', { class: 'session-view' },
    h('nav', {}, h('a', { href: '#/' }, '← Sessions')),
    h('header', { class: 'session-header' },
      h('h1', {}, h('span', { class: 'muted' }, 'Session '), h('code', { dataset: { testid: 'session-id' } }, sessionId)), status, connection,
      h('div', { class: 'actions' }, cancel, deleteButton, confirmDelete)),
    notice, usage, pending.element,
    h('section', { 'aria-label': 'Transcript' }, h('h2', {}, 'Transcript'), transcript.element),
    steerForm,
    h('section', { 'aria-label': 'Runs' }, h('h2', {}, 'Runs'),
      h('table', { class: 'runs', dataset: { testid: 'runs' } },
        h('thead', {}, h('tr', {}, ...['Run', 'Status', 'Started', 'Tokens in / out', 'Cost', 'Trace id'].map(name => h('th', { scope: 'col' }, name)))), runs)))

  follow()
  return { element, focus: () => steerText.focus(), dispose: stopReads }
}

/** One run record: sub-agents (a `label`) indented under their run, with their own status and cost. */
function runRow(run) {
  const usage = run.totals?.usage ?? {}
  const name = run.label === undefined ? run.id : `${'  '.repeat(Math.max(0, (run.depth ?? 1) - 1))}↳ ${run.label}`
  return h('tr', { dataset: { testid: 'run-row', runId: run.id } },
    h('td', {}, h('code', {}, name)), h('td', {}, statusBadge(run.status)), h('td', {}, formatTime(run.startedAt)),
    h('td', {}, run.totals ? `${usage.inputTokens ?? 0} / ${usage.outputTokens ?? 0}` : ''),
    h('td', { dataset: { testid: 'run-cost' } }, run.totals ? formatCost(run.totals.costUsd) : ''),
    h('td', {}, run.traceId ? h('code', { dataset: { testid: 'run-trace' } }, run.traceId) : h('span', { class: 'muted' }, '—')))
}

/** Enter submits the form of a text area; Shift+Enter is a new line. */
export function submitOnEnter(event, form) {
  if (event.key !== 'Enter' || event.shiftKey || event.isComposing) return
  event.preventDefault()
  form.requestSubmit()
}
