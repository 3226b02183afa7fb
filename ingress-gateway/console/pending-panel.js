import { api } from './api.js'
import { h } from './dom.js'

/**
 * The session's open questions and approvals (`pending` of `GET /v1/sessions/:id`), each answered with buttons through
 * `POST /v1/awakeables/:id/resolve` (with the API key, so the page calls its own origin only). Redrawn only when the
 * set of questions changes, so an answer being typed survives the session's refreshes.
 */
export class PendingPanel {
  /** @param {() => void} onAnswered */
  constructor(onAnswered) {
    this.onAnswered = onAnswered
    this.shownIds = ''
    this.element = h('section', { class: 'pending', 'aria-label': 'Waiting for you', dataset: { testid: 'pending' }, hidden: true })
  }

  update(pending) {
    const questions = Array.isArray(pending) ? pending : []
    const ids = questions.map(question => question.id).join(',')
    if (ids === this.shownIds) return
    this.shownIds = ids
    this.element.hidden = questions.length === 0
    this.element.replaceChildren(h('h2', {}, 'Waiting for you'), ...questions.map(question => this.card(question)))
  }

  card(question) {
    const status = h('p', { class: 'muted', role: 'status' })
    const send = async body => {
      status.textContent = 'Sending…'
      for (const button of card.querySelectorAll('button')) button.disabled = true
      try {
        await api(`/v1/awakeables/${encodeURIComponent(question.id)}/resolve`, { method: 'POST', body })
        status.textContent = 'Answered.'
        this.onAnswered()
      } catch (error) {
        status.textContent = `Not answered: ${error.message}`
        for (const button of card.querySelectorAll('button')) button.disabled = false
      }
    }
    const card = question.kind === 'approval' ? this.approval(question, send) : this.ask(question, send)
    card.append(status)
    return card
  }

  approval(question, send) {
    const reason = h('input', { type: 'text', placeholder: 'Reason (optional, for a denial)', 'aria-label': 'Reason for a denial' })
    return h('article', { class: 'question approval', dataset: { testid: 'approval', questionId: question.id } },
      h('p', {}, h('strong', {}, 'Approve '), h('code', {}, question.tool ?? '?'), h('strong', {}, '?')),
      h('pre', { class: 'input' }, question.input ?? ''),
      h('div', { class: 'row' },
        h('button', { type: 'button', class: 'primary', dataset: { testid: 'approve' }, onclick: () => send({ decision: 'approve' }) }, 'Approve'),
        h('button', { type: 'button', dataset: { testid: 'deny' }, onclick: () => send({ decision: 'deny', ...(reason.value.trim() ? { reason: reason.value.trim() } : {}) }) }, 'Deny'),
        reason))
  }

  ask(question, send) {
    const answer = h('input', { type: 'text', placeholder: 'Your answer', 'aria-label': 'Your answer', dataset: { testid: 'answer-input' } })
    const options = Array.isArray(question.options) ? question.options : []
    const form = h('form', { class: 'row', onsubmit: event => { event.preventDefault(); if (answer.value.trim()) void send({ answer: answer.value.trim() }) } },
      answer, h('button', { type: 'submit', class: 'primary', dataset: { testid: 'answer' } }, 'Answer'))
    return h('article', { class: 'question', dataset: { testid: 'question', questionId: question.id } },
      h('p', {}, h('strong', {}, question.kind === 'present_plan' ? 'Plan: ' : 'Question: '), question.question),
      options.length > 0 ? h('div', { class: 'row' }, ...options.map(option => h('button', { type: 'button', onclick: () => send({ answer: option }) }, option))) : null,
      form)
  }
}
