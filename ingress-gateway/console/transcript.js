import { formatJson, formatTotals, h, statusBadge } from './dom.js'

/**
 * The live transcript of a session, built from its event stream: one block per top-level run (its prompt, then its
 * model steps with their text and tool calls, steering messages, its end with totals and trace id), and each
 * sub-agent as a nested block under the `spawn` call that started it, with its own status and cost. Elements are
 * created once and updated in place, so a streaming step does not redraw the page (nor close an open tool call).
 *
 * Text: a step shows the live deltas of its current attempt (`model:delta`, placed by run and turn) until its durable
 * `turn:end`, whose text is authoritative; `model:superseded` drops what an earlier attempt streamed.
 */
export class Transcript {
  constructor() {
    /** @type {HTMLElement} */
    this.element = h('div', { class: 'transcript', dataset: { testid: 'transcript' }, 'aria-live': 'polite' })
    /** Every agent (top-level run or sub-agent) by its run id. */
    this.agents = new Map()
    /** Every tool call by {@link callKey}: a call id is unique within one model response only. */
    this.calls = new Map()
    /** Trace ids of runs, from the session's run records. */
    this.traceIds = new Map()
  }

  /** One message of the event stream. */
  apply(event) {
    const data = event?.data
    if (!data || typeof data !== 'object') return
    if (event.type === 'model:delta') return this.delta(data)
    if (event.type === 'model:superseded') return this.superseded(data)
    if (typeof data.runId !== 'string') return
    if (event.type === 'run:start') return this.runStart(data)
    if (event.type === 'child:start') return this.childStart(data)
    const agent = this.agentOf(data)
    if (event.type === 'tool:start') this.toolStart(agent, data)
    else if (event.type === 'tool:end') this.toolEnd(data)
    else if (event.type === 'turn:end') this.turnEnd(agent, data)
    else if (event.type === 'steer') this.steer(agent, data)
    else if (event.type === 'question') this.question(agent, data)
    else if (event.type === 'run:end' || event.type === 'child:end') this.end(agent, data)
  }

  /** Run records of `GET /v1/sessions/:id`: the trace ids of the runs shown. */
  setRunRecords(runs) {
    for (const run of runs ?? []) {
      if (typeof run.traceId === 'string') this.traceIds.set(run.id, run.traceId)
      const agent = this.agents.get(run.id)
      if (agent) this.renderFooter(agent)
    }
  }

  runStart(data) {
    const agent = this.agentOf(data)
    agent.prompt.textContent = String(data.prompt ?? '')
    agent.promptBlock.hidden = false
  }

  childStart(data) {
    const agent = this.agentOf(data)
    agent.status = 'running'
    // Seen first through a delta (no task yet): placed again, now that its task can name its spawn call.
    if (agent.orphan) this.placeChild(agent, data)
    this.renderHeader(agent)
  }

  /** The agent an event belongs to, created when first seen (a delta can arrive before its run's durable start). */
  agentOf(data) {
    const known = this.agents.get(data.runId)
    if (known) {
      // A sub-agent's live deltas carry its label but not its depth: its durable events do.
      if (typeof data.depth === 'number') known.depth = data.depth
      return known
    }
    const isChild = typeof data.label === 'string'
    const agent = {
      runId: data.runId, label: isChild ? data.label : undefined, depth: Number(data.depth ?? 0), status: 'running', totals: undefined, error: undefined,
      steps: new Map(), header: h('div', { class: 'agent-header' }), body: h('div', { class: 'agent-body' }), footer: h('div', { class: 'agent-footer muted' }),
      prompt: h('p', {}), task: h('span', { class: 'task' }), promptBlock: h('div', { class: 'message user', hidden: true }),
    }
    agent.promptBlock.append(h('span', { class: 'who' }, 'You'), agent.prompt)
    agent.element = h('section', { class: isChild ? 'agent child' : 'agent run', dataset: { testid: isChild ? 'subagent' : 'run', runId: data.runId } }, agent.header, agent.promptBlock, agent.body, agent.footer)
    this.agents.set(data.runId, agent)
    this.renderHeader(agent)
    if (isChild) this.placeChild(agent, data)
    else this.element.append(agent.element)
    return agent
  }

  /**
   * A sub-agent goes under the `spawn` call of its parent level with the same task. Its events and its parent's travel
   * apart, so it can start before the call is known: it waits at the end of the latest run until the call shows.
   */
  placeChild(agent, data) {
    agent.task.textContent = String(data.task ?? '')
    const spawns = [...this.calls.values()].filter(call => call.name === 'spawn' && call.agent.depth === agent.depth - 1 && !call.hasChild)
    const parent = spawns.find(call => call.input?.task === data.task)
    if (parent) return adopt(parent, agent)
    agent.orphan = true
    const runs = [...this.agents.values()].filter(other => other.label === undefined)
    ;(runs.at(-1)?.body ?? this.element).append(agent.element)
  }

  /**
   * The step of an agent's turn `turn`, placed by its turn number: live deltas of a step can arrive before the durable
   * events of the step before it.
   */
  stepOf(agent, turn) {
    const known = agent.steps.get(turn)
    if (known) return known
    const step = { turn, final: false, attempt: undefined, live: '', thinking: h('p', { class: 'thinking', hidden: true }), text: h('p', { class: 'text', dataset: { testid: 'assistant-text' } }), calls: h('div', { class: 'calls' }) }
    step.element = h('div', { class: 'message assistant step streaming', dataset: { testid: 'step' } }, h('span', { class: 'who' }, agent.label ?? 'Agent'), step.thinking, step.text, step.calls)
    agent.steps.set(turn, step)
    placeInOrder(agent.body, step.element, turn)
    return step
  }

  /** A steering message goes before the assistant turn that first saw it (its turn id carries that turn's number). */
  steer(agent, data) {
    const element = h('div', { class: 'message steer', dataset: { testid: 'steer' } }, h('span', { class: 'who' }, 'You (steering)'), h('p', {}, String(data.text ?? '')))
    placeInOrder(agent.body, element, turnOf(data.turnId) - 0.5)
  }

  delta(data) {
    if (typeof data.runId !== 'string' || typeof data.turn !== 'number') return
    const agent = this.agentOf(data)
    const step = this.stepOf(agent, data.turn)
    if (step.final) return
    if (data.attempt !== step.attempt) {
      // A new attempt (or this viewer's first sight of one) starts over from offset 0.
      if (data.offset !== 0) return
      step.attempt = data.attempt
      step.live = ''
      step.liveThinking = ''
    }
    if (data.kind === 'thinking') {
      if (data.offset !== (step.liveThinking ?? '').length) return
      step.liveThinking = (step.liveThinking ?? '') + data.text
      step.thinking.textContent = step.liveThinking
      step.thinking.hidden = false
      return
    }
    if (data.offset !== step.live.length) return
    step.live += data.text
    step.text.textContent = step.live
  }

  superseded(data) {
    const step = this.agents.get(data.runId)?.steps.get(data.turn)
    if (!step || step.final || step.attempt !== data.attempt) return
    step.attempt = data.nextAttempt
    step.live = ''
    step.liveThinking = ''
    step.text.textContent = ''
    step.thinking.textContent = ''
  }

  turnEnd(agent, data) {
    const step = this.stepOf(agent, turnOf(data.turnId))
    step.final = true
    step.text.textContent = String(data.text ?? '')
    step.element.classList.remove('streaming')
  }

  toolStart(agent, data) {
    const key = callKey(data)
    if (this.calls.has(key)) return
    const step = this.stepOf(agent, turnOf(data.turnId))
    const call = {
      callId: data.callId, name: String(data.name ?? ''), input: data.input, agent, hasChild: false,
      state: h('span', { class: 'call-state muted' }, 'running'), output: h('pre', { class: 'output', hidden: true }), children: h('div', { class: 'children' }),
    }
    call.details = h('details', { class: 'call', dataset: { testid: 'tool-call', tool: call.name } },
      h('summary', {}, h('code', {}, call.name), ' ', call.state),
      h('div', { class: 'label muted' }, 'Input'), h('pre', { class: 'input' }, formatJson(data.input)),
      call.output, call.children)
    this.calls.set(key, call)
    step.calls.append(call.details)
    if (call.name !== 'spawn') return
    const orphan = [...this.agents.values()].find(other => other.orphan && other.depth === agent.depth + 1 && other.task.textContent === String(data.input?.task ?? ''))
    if (orphan) adopt(call, orphan)
  }

  toolEnd(data) {
    const call = this.calls.get(callKey(data))
    if (!call) return
    call.state.textContent = data.isError ? 'error' : 'done'
    call.details.classList.toggle('error', data.isError === true)
    call.output.textContent = String(data.output ?? '')
    call.output.hidden = false
    call.output.dataset.testid = 'tool-output'
  }

  /** A question names its call but not its turn: it is the agent's latest call with that id. */
  question(agent, data) {
    const call = [...this.calls.values()].filter(candidate => candidate.agent === agent && candidate.callId === data.callId).at(-1)
    if (call && call.output.hidden) call.state.textContent = 'waiting for your answer'
  }

  end(agent, data) {
    agent.status = String(data.status ?? '')
    agent.totals = data.totals
    agent.error = typeof data.error === 'string' ? data.error : undefined
    for (const step of agent.steps.values()) step.element.classList.remove('streaming')
    this.renderHeader(agent)
    this.renderFooter(agent)
  }

  renderHeader(agent) {
    const title = agent.label === undefined ? h('span', { class: 'title' }, `Run ${agent.runId}`) : h('span', { class: 'title' }, `Sub-agent ${agent.label}`, ': ', agent.task)
    agent.header.replaceChildren(title, ' ', statusBadge(agent.status), ...(agent.totals ? [h('span', { class: 'muted', dataset: { testid: 'agent-totals' } }, ` ${formatTotals(agent.totals)}`)] : []))
  }

  renderFooter(agent) {
    if (agent.label !== undefined) return
    const traceId = this.traceIds.get(agent.runId)
    agent.footer.replaceChildren(...[
      agent.error ? h('p', { class: 'error-text' }, agent.error) : undefined,
      agent.totals ? h('span', { dataset: { testid: 'run-totals' } }, `${agent.status} · ${formatTotals(agent.totals)}`) : undefined,
      traceId ? h('span', {}, ' · trace ', h('code', { dataset: { testid: 'trace-id' } }, traceId)) : undefined,
    ].filter(element => element !== undefined))
  }
}

/** Puts a sub-agent under the `spawn` call that started it. */
function adopt(call, agent) {
  call.hasChild = true
  call.details.open = true
  agent.orphan = false
  call.children.append(agent.element)
}

/** A tool call's key: its run, the turn holding it (the result turn has the same number) and its id. */
function callKey(data) {
  return `${data.runId}:${turnOf(data.turnId)}:${data.callId}`
}

/** Inserts `element` into `parent` before the first child placed at a higher `order`. */
function placeInOrder(parent, element, order) {
  element.dataset.order = String(order)
  const next = [...parent.children].find(child => Number(child instanceof HTMLElement ? child.dataset.order : NaN) > order)
  parent.insertBefore(element, next ?? null)
}

/** The turn number a turn id encodes (`<run>-t<n>-a|r|s`); 0 when it has none. */
function turnOf(turnId) {
  const match = typeof turnId === 'string' ? /-t(\d+)-[ars]$/.exec(turnId) : null
  return match ? Number(match[1]) : 0
}
