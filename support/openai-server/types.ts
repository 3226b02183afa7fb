import type { IncomingHttpHeaders } from 'node:http'

/** A JSON value as the fake server parses and sends it. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json }

/** A JSON object, such as a request body. */
export type JsonObject = { [key: string]: Json }

/** One tool call of a scripted answer; `arguments` is sent in pieces of `argumentChunkChars` characters. */
export interface ScriptedToolCall { id?: string; name: string; arguments: JsonObject | string }

/** Usage a script may pin; anything left out is computed (tokens ≈ characters / 4). */
export interface ScriptedChatUsage { prompt_tokens?: number; completion_tokens?: number; cached_tokens?: number }

/** A successful streamed answer: reasoning, text and tool calls, each cut into several chunks. */
export interface ScriptedChat {
  kind: 'chat'
  text?: string
  /** Sent as `delta.reasoning_content` before the text (DeepSeek-style servers). */
  reasoning?: string
  toolCalls?: ScriptedToolCall[]
  /** Default: `tool_calls` when there are tool calls, else `stop`; `null` sends none. */
  finishReason?: string | null
  usage?: ScriptedChatUsage
  /** Leave the usage chunk out (a server that ignores `stream_options`). */
  omitUsage?: boolean
  /** Characters per text chunk (default 8) and per tool-argument chunk (default 7). */
  textChunkChars?: number
  argumentChunkChars?: number
  /** Wait this long before each chunk after the first. Default the server's `chunkIntervalMs`. */
  chunkIntervalMs?: number
}

/** An HTTP error answer with OpenAI's body `{ error: { message, type, param, code } }`. */
export interface ScriptedChatError { kind: 'error'; status: number; message?: string; type?: string }

/** Streams the first `afterChunks` chunks, then ends the response (`end`), keeps it open (`stall`) or destroys the socket (`cut`). */
export interface ScriptedChatFault { kind: 'cut' | 'stall' | 'end'; afterChunks: number; chat?: ScriptedChat }

/** Everything a test can script for one request. */
export type ScriptedChatResponse = ScriptedChat | ScriptedChatError | ScriptedChatFault

/** One request as the server received it, with the shape problems found in it (empty when valid). */
export interface RecordedChatRequest {
  method: string
  path: string
  headers: IncomingHttpHeaders
  body: JsonObject | undefined
  apiKey: string | undefined
  /** `x-stainless-retry-count` as a number. */
  retryCount: number | undefined
  problems: string[]
}

/** Produces the answer to one request when the queue is empty. */
export type ChatScriptHandler = (request: RecordedChatRequest) => ScriptedChatResponse | Promise<ScriptedChatResponse>

/** Options of {@link startOpenAiServer}. */
export interface FakeOpenAiServerOptions {
  /** When set, requests must carry `Authorization: Bearer <apiKey>`; others get 401. */
  apiKey?: string
  /** Answer a request with shape problems with a 400 (as the API does). Default true. */
  rejectInvalid?: boolean
  /** Wait this long between chunks (default 0). */
  chunkIntervalMs?: number
  /** Called after each streamed chunk is written. */
  onChunkSent?: (chunk: JsonObject) => void
}

/** A running fake Chat Completions API; hand `baseURL` to the SDK. */
export interface FakeOpenAiServer {
  /** `http://127.0.0.1:<port>/v1`. */
  readonly baseURL: string
  readonly requests: RecordedChatRequest[]
  enqueue(...responses: ScriptedChatResponse[]): void
  setHandler(handler: ChatScriptHandler): void
  close(): Promise<void>
}
