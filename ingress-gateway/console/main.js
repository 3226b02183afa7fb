/* global document, location, window */
import { api, apiKey, setApiKey } from './api.js'
import { h } from './dom.js'
import { sessionListView } from './session-list-view.js'
import { sessionView } from './session-view.js'

/**
 * The console's entry: a hash router over three views (sign in, the sessions list, a session), each built by its
 * module and disposed when the route changes. Every call goes to the gateway's public API on this origin.
 */
const app = /** @type {HTMLElement} */ (document.getElementById('app'))
const signOut = /** @type {HTMLButtonElement} */ (document.getElementById('sign-out'))
const who = /** @type {HTMLElement} */ (document.getElementById('who'))
/** @type {{ element: HTMLElement, focus?: () => void, dispose: () => void }} */
let current = { element: app, dispose: () => undefined }

const navigate = hash => {
  if (location.hash === hash) route()
  else location.hash = hash
}

function route() {
  current.dispose()
  const [path = '', search = ''] = location.hash.replace(/^#/, '').split('?')
  const key = apiKey()
  signOut.hidden = key === ''
  who.textContent = key === '' ? '' : `signed in with key …${key.slice(-4)}`
  const match = /^\/s\/(.+)$/.exec(path)
  current = key === '' ? signInView() : match ? sessionView(decodeURIComponent(match[1] ?? ''), navigate) : sessionListView(navigate, new URLSearchParams(search))
  app.replaceChildren(current.element)
  current.focus?.()
}

/** Asks for an API key and checks it with one list request before keeping it (in sessionStorage only). */
function signInView() {
  const key = h('input', { type: 'password', required: true, autocomplete: 'off', 'aria-label': 'API key', dataset: { testid: 'api-key' } })
  const status = h('p', { class: 'notice', role: 'alert', hidden: true })
  const form = h('form', { class: 'sign-in', onsubmit: async event => {
    event.preventDefault()
    try {
      await api('/v1/sessions?limit=1', { key: key.value.trim() })
      setApiKey(key.value.trim())
      navigate('#/')
    } catch (error) {
      status.hidden = false
      status.textContent = error.status === 401 ? 'This key is not accepted.' : `Could not sign in: ${error.message}`
    }
  } },
  h('h1', {}, 'Sign in'),
  h('p', {}, 'The API key of a tenant (GATEWAY_API_KEYS; npm start prints one; in open mode any text). It stays in this tab only.'),
  h('label', {}, 'API key ', key), h('button', { type: 'submit', class: 'primary', dataset: { testid: 'sign-in' } }, 'Sign in'), status)
  return { element: form, focus: () => key.focus(), dispose: () => undefined }
}

signOut.addEventListener('click', () => {
  setApiKey('')
  navigate('#/')
})
window.addEventListener('hashchange', route)
route()
