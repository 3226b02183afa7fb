import type { AgentCapabilities } from '@ag-ui/core'

/** What `POST /v1/ag-ui` supports, as `GET /v1/ag-ui/capabilities` answers it (AG-UI `AgentCapabilities`). */
export const AG_UI_CAPABILITIES = {
  identity: { name: 'zidane', type: 'durable-agent', description: 'A durable AI agent session on Restate: runs survive restarts, questions and approvals wait as long as needed.' },
  transport: { streaming: true, websocket: false, httpBinary: false, pushNotifications: false, resumable: true },
  tools: { supported: true, parallelCalls: true, clientProvided: false },
  state: { snapshots: false, deltas: false, memory: true, persistentState: true },
  multiAgent: { supported: true, delegation: true, handoffs: false },
  reasoning: { supported: true, streaming: true, encrypted: false },
  humanInTheLoop: { supported: true, approvals: true, interventions: true, feedback: false, interrupts: true, approveWithEdits: false },
  custom: {
    threadId: 'the session id',
    steering: 'forwardedProps.mode = "steer" sends the newest user message into the run in progress',
    subagents: 'forwardedProps.subagents = true forwards SUBAGENT_* events (and their activity as CUSTOM events)',
  },
} as const satisfies AgentCapabilities
