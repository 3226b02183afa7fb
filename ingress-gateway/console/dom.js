/* global document */
/**
 * A tiny element builder: `h('button', { type: 'button', onclick }, 'Cancel')`. Attributes starting with `on` are
 * listeners, `dataset` sets `data-*`, `false`/`null`/`undefined` attributes are left out; children are nodes or text.
 * @template {keyof HTMLElementTagNameMap} Tag
 * @param {Tag} tag
 * @param {Record<string, any>} [attributes]
 * @param {...(Node | string | number | null | undefined | false | Array<Node | string | null | undefined | false>)} children
 * @returns {HTMLElementTagNameMap[Tag]}
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue
    if (name.startsWith('on')) element.addEventListener(name.slice(2), value)
    else if (name === 'dataset') Object.assign(element.dataset, value)
    else if (name === 'text') element.textContent = String(value)
    else if (value === true) element.setAttribute(name, '')
    else element.setAttribute(name, String(value))
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue
    element.append(typeof child === 'object' ? child : String(child))
  }
  return element
}

/** A cost in US dollars, to the micro-dollar below $1 (the cost of one model call is often a fraction of a cent). */
export function formatCost(costUsd) {
  const value = typeof costUsd === 'number' ? costUsd : 0
  return `$${value.toFixed(value >= 1 ? 4 : 6)}`
}

/** A time (ms since the epoch) as the browser's locale shows it; '' when absent. */
export function formatTime(atMs) {
  return typeof atMs === 'number' ? new Date(atMs).toLocaleString() : ''
}

/** Run totals (`{ usage, costUsd, modelRequests, toolCalls, turns }`) in one line. */
export function formatTotals(totals) {
  if (!totals) return ''
  const usage = totals.usage ?? {}
  return `${usage.inputTokens ?? 0} in / ${usage.outputTokens ?? 0} out tokens · ${formatCost(totals.costUsd)} · ${totals.modelRequests ?? 0} model requests · ${totals.toolCalls ?? 0} tool calls`
}

/** A JSON value as indented text (strings as they are). */
export function formatJson(value) {
  if (typeof value === 'string') return value
  try {
    return JSON.stringify(value, null, 2)
  } catch {
    return String(value)
  }
}

/** A status badge: its class names the status, so the stylesheet colours it. */
export function statusBadge(status) {
  return h('span', { class: `badge status-${String(status)}`, dataset: { testid: 'status' } }, String(status))
}
