/* global setTimeout, crypto */
import { api, sessionPath } from './api.js'
import { formatCost, formatTime, h, statusBadge } from './dom.js'
import { submitOnEnter } from './session-view.js'

/** The statuses `GET /v1/sessions?status=` filters by (the gateway's list). */
const STATUSES = ['running', 'waiting', 'idle', 'completed', 'cancelled', 'failed', 'error', 'aborted', 'interrupted', 'suspended', 'limit', 'timeout']
const FILTERABLE = STATUSES.filter(status => status !== 'interrupted')
/** How long a new session is looked for in the list before the console opens it anyway. */
const NEW_SESSION_WAIT_MS = 10_000

/**
 * The sessions list (`GET /v1/sessions`, newest activity first, "More" follows `nextCursor`) with status filters and
 * a search by id, and the new-session form (`POST /v1/sessions/:id/prompts`).
 * @param {(hash: string) => void} navigate
 * @param {URLSearchParams} query
 */
export function sessionListView(navigate, query) {
  const rows = h('tbody', {})
  const more = h('button', { type: 'button', hidden: true, dataset: { testid: 'more' }, onclick: () => void load(false) }, 'More')
  const notice = h('p', { class: 'notice', role: 'status', hidden: !query.has('deleted') }, query.has('deleted') ? `Session ${query.get('deleted')} deleted.` : '')
  const filters = FILTERABLE.map(status => h('label', { class: 'filter' }, h('input', { type: 'checkbox', value: status, dataset: { testid: `filter-${status}` }, onchange: () => void load(true) }), ' ', status))
  const search = h('input', { type: 'search', placeholder: 'Session id', 'aria-label': 'Search by session id', dataset: { testid: 'search' }, oninput: () => applySearch() })
  const searchForm = h('form', { class: 'row', role: 'search', onsubmit: event => { event.preventDefault(); const id = search.value.trim(); if (id) navigate(`#/s/${encodeURIComponent(id)}`) } },
    search, h('button', { type: 'submit', dataset: { testid: 'open-id' } }, 'Open'))
  let cursor = null
  let sessions = []

  const applySearch = () => {
    const needle = search.value.trim().toLowerCase()
    rows.replaceChildren(...sessions.filter(session => session.id.toLowerCase().includes(needle)).map(session => sessionRow(session)))
    if (rows.childElementCount === 0) rows.append(h('tr', {}, h('td', { colspan: 6, class: 'muted' }, sessions.length === 0 ? 'No sessions yet.' : 'No session on the pages shown matches; Open looks the id up.')))
  }
  const load = async fresh => {
    const status = filters.map(label => label.querySelector('input')).filter(input => input?.checked).map(input => input?.value).join(',')
    const params = new URLSearchParams({ limit: '50' })
    if (status) params.set('status', status)
    if (!fresh && cursor) params.set('cursor', cursor)
    try {
      const page = await api(`/v1/sessions?${params.toString()}`)
      sessions = fresh ? page.sessions : [...sessions, ...page.sessions]
      cursor = page.nextCursor
      more.hidden = cursor === null
      applySearch()
    } catch (error) {
      notice.hidden = false
      notice.textContent = `Could not list the sessions: ${error.message}`
    }
  }

  const element = h('div', { class: 'list-view' },
    newSessionForm(navigate),
    h('section', { 'aria-label': 'Sessions' },
      h('div', { class: 'row spread' }, h('h2', {}, 'Sessions'), h('button', { type: 'button', dataset: { testid: 'refresh' }, onclick: () => void load(true) }, 'Refresh')),
      notice, searchForm,
      h('fieldset', { class: 'filters' }, h('legend', {}, 'Status'), ...filters),
      h('table', { class: 'sessions', dataset: { testid: 'sessions' } },
        h('thead', {}, h('tr', {}, ...['Session', 'Status', 'Last activity', 'Turns', 'Cost', 'Waiting'].map(name => h('th', { scope: 'col' }, name)))), rows),
      more))
  void load(true)
  return { element, focus: () => element.querySelector('textarea')?.focus(), dispose: () => undefined }
}

function sessionRow(session) {
  return h('tr', { dataset: { testid: 'session-row', sessionId: session.id } },
    h('td', {}, h('a', { href: `#/s/${encodeURIComponent(session.id)}` }, session.id)), h('td', {}, statusBadge(session.status)),
    h('td', {}, formatTime(session.lastActivityAt)), h('td', {}, String(session.turns)), h('td', {}, formatCost(session.costUsd)),
    h('td', {}, session.pending > 0 ? h('strong', {}, String(session.pending)) : '0'))
}

/** The new-session form: an id (a fresh one by default), the prompt, and tools whose calls wait for approval. */
function newSessionForm(navigate) {
  const id = h('input', { type: 'text', pattern: '[A-Za-z0-9_\\-]{1,128}', value: freshId(), 'aria-label': 'Session id', dataset: { testid: 'new-id' } })
  const prompt = h('textarea', { rows: 3, required: true, placeholder: 'What should the agent do? (Enter starts, Shift+Enter for a new line)', 'aria-label': 'Prompt', dataset: { testid: 'new-prompt' } })
  const approve = h('input', { type: 'text', placeholder: 'e.g. shell, write_file', 'aria-label': 'Tools that need your approval', dataset: { testid: 'new-approve' } })
  const status = h('p', { class: 'muted', role: 'status' })
  const submit = h('button', { type: 'submit', class: 'primary', dataset: { testid: 'start' } }, 'Start session')
  const form = h('form', { class: 'new-session', 'aria-label': 'New session', onsubmit: event => { event.preventDefault(); void start() } },
    h('h2', {}, 'New session'), prompt,
    h('div', { class: 'row' }, h('label', {}, 'Id ', id), h('label', {}, 'Approve before running ', approve), submit), status)
  prompt.addEventListener('keydown', event => submitOnEnter(event, form))
  const start = async () => {
    const sessionId = id.value.trim()
    const tools = approve.value.split(',').map(tool => tool.trim()).filter(tool => tool !== '')
    submit.disabled = true
    status.textContent = 'Starting…'
    try {
      await api(sessionPath(sessionId, '/prompts'), { method: 'POST', body: { prompt: prompt.value, ...(tools.length > 0 ? { policy: { approve: tools } } : {}) } })
      await listed(sessionId)
      navigate(`#/s/${encodeURIComponent(sessionId)}`)
    } catch (error) {
      status.textContent = `Not started: ${error.message}`
      submit.disabled = false
    }
  }
  return form
}

/** Waits until the session shows in the list: then its record and event stream exist, and the view opens without a 404. */
async function listed(sessionId) {
  const deadline = Date.now() + NEW_SESSION_WAIT_MS
  while (Date.now() < deadline) {
    const page = await api('/v1/sessions?limit=20')
    if (page.sessions.some(session => session.id === sessionId)) return
    await new Promise(resolve => setTimeout(resolve, 150))
  }
}

function freshId() {
  return `s-${crypto.randomUUID().slice(0, 8)}`
}
