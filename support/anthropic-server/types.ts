import type { IncomingHttpHeaders } from 'node:http'

/** A JSON value as the fake server parses and sends it. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json }

/** A JSON object, such as a request body. */
export type JsonObject = { [key: string]: Json }

/** One content block of a scripted answer, in wire spelling. */
export type ScriptedBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  /** `partialJson` replaces the serialized `input` on the wire (e.g. a truncated `{"path": "/tm`). */
  | { type: 'tool_use'; id?: string; name: string; input: { [key: string]: Json }; partialJson?: string }

/** Usage fields a script may pin; anything left out is computed from the request (tokens ≈ characters / 4). */
export interface ScriptedUsage {
  input_tokens?: number
  output_tokens?: number
  cache_creation_input_tokens?: number
  cache_read_input_tokens?: number
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number } | null
}

/** A successful answer, described at the level of blocks; the server turns it into JSON or SSE. */
export interface ScriptedMessage {
  kind: 'message'
  content: ScriptedBlock[]
  /** Any string, so tests can send values the SDK does not know. Default: `tool_use` if a tool_use block is present, else `end_turn`. */
  stopReason?: string | null
  stopSequence?: string | null
  usage?: ScriptedUsage
  model?: string
  /** Send an `event: ping` after `message_start` and between blocks (default true). */
  pings?: boolean
  /** Before `message_delta`, keep the stream open this long sending nothing but a `ping` every 50 ms. */
  pingForMs?: number
  /** Wait this long before each `content_block_delta` (a model streaming tokens at a fixed rate); default the server's `deltaIntervalMs`. */
  deltaIntervalMs?: number
  /** Leave out `content_block_stop` of the last block (a block still open when the stream ends). */
  omitLastBlockStop?: boolean
  headers?: Record<string, string>
}

/** An HTTP error answer `{type:'error', error:{type, message}, request_id}`. */
export interface ScriptedError {
  kind: 'error'
  status: number
  /** The `error.type`; default derived from the status (429 → rate_limit_error, 529 → overloaded_error, …). */
  errorType?: string
  message?: string
  retryAfterMs?: number
  retryAfterSeconds?: number
  /** Sends `x-should-retry: true|false`, which overrides the SDK's own retry decision. */
  shouldRetry?: boolean
  headers?: Record<string, string>
}

/** Streams the first `afterEvents` SSE events of `message`, then sends nothing more and keeps the socket open. */
export interface ScriptedStall { kind: 'stall'; afterEvents: number; message?: ScriptedMessage }

/** Streams the first `afterEvents` SSE events of `message`, writes half an event and destroys the socket. */
export interface ScriptedCut { kind: 'cut'; afterEvents: number; message?: ScriptedMessage }

/** Streams the first `afterEvents` SSE events of `message`, then ends the response cleanly (no `message_stop`). */
export interface ScriptedEarlyEnd { kind: 'early_end'; afterEvents: number; message?: ScriptedMessage }

/** Streams the first `afterEvents` events of `message`, then an `event: error` with `errorType` and ends the response. */
export interface ScriptedStreamError {
  kind: 'stream_error'
  afterEvents: number
  errorType?: string
  message?: ScriptedMessage
}

/** `overloaded`: a 529 `overloaded_error` before the stream, or with `midStream` an `event: error` after `afterEvents` events. */
export interface ScriptedOverloaded { kind: 'overloaded'; midStream?: boolean; afterEvents?: number; retryAfterMs?: number }

/** Everything a test can script for one request. */
export type ScriptedResponse = ScriptedMessage | ScriptedError | ScriptedStall | ScriptedCut | ScriptedEarlyEnd | ScriptedStreamError | ScriptedOverloaded

/** Which header carried the key, if any. */
export type AuthStyle = 'x-api-key' | 'bearer' | 'none'

/** One request as the server received it. */
export interface RecordedRequest {
  method: string
  path: string
  headers: IncomingHttpHeaders
  /** The parsed JSON body, or `undefined` when the body was empty or not JSON. */
  body: JsonObject | undefined
  rawBody: string
  /** `x-stainless-retry-count` as a number: 0 on the first attempt, 1, 2 … on SDK retries. */
  retryCount: number | undefined
  authStyle: AuthStyle
  apiKey: string | undefined
}

/** Produces the answer to one request; used when the queue is empty. */
export type ScriptHandler = (request: RecordedRequest) => ScriptedResponse | Promise<ScriptedResponse>

/** Options of {@link start}. */
export interface FakeServerOptions {
  /** When set, requests must carry this key in `x-api-key` or `authorization: Bearer`; others get 401. */
  apiKey?: string
  /** Prefixes shorter than this many estimated tokens are not cached (the real minimum is 1024–4096). Default 0. */
  minCacheableTokens?: number
  /** Reject `temperature`, `top_p` and `top_k` with a 400, as API version 2026-10-21 does. Default true. */
  rejectSamplingParams?: boolean
  /** Wait this long before each `content_block_delta` of a streamed message (default 0: all at once). */
  deltaIntervalMs?: number
  /** Called right after each SSE event of a streamed message is written (e.g. to time tokens from the server's side). */
  onEventSent?: (event: { event: string; data: { [key: string]: Json } }) => void
}

/** A running fake Messages API. */
export interface FakeAnthropicServer {
  /** Base URL to hand to the SDK, e.g. `http://127.0.0.1:54321`. */
  readonly url: string
  /** Every request received, in order (including rejected ones). */
  readonly requests: RecordedRequest[]
  /** Appends answers; each request takes the next one. */
  enqueue(...responses: ScriptedResponse[]): void
  /** Answers requests when the queue is empty. */
  setHandler(handler: ScriptHandler): void
  /** Stops listening and destroys open sockets (stalled streams included). */
  close(): Promise<void>
}
