/**
 * The part of an AI SDK `LanguageModelV3` / `LanguageModelV4` (`@ai-sdk/provider`) this adapter uses, written out
 * structurally so the library does not depend on the package: any `@ai-sdk/*` provider's model satisfies it.
 */
export type AiSdkLanguageModel = AiSdkModelOf<'v3', string> | AiSdkModelOf<'v4', { type: 'data'; data: string }>

/** A model of one specification version, whose prompts carry file data as `Data`. */
export interface AiSdkModelOf<Version extends 'v3' | 'v4', Data extends AiSdkFileData> {
  readonly specificationVersion: Version
  readonly provider: string
  readonly modelId: string
  doStream(options: AiSdkCallOptions<Data>): PromiseLike<{ stream: ReadableStream<AiSdkStreamPart> }>
}

/** A prompt message in the AI SDK's provider-level form. */
export type AiSdkMessage<Data extends AiSdkFileData = AiSdkFileData> =
  | { role: 'system'; content: string }
  | { role: 'user'; content: AiSdkUserPart<Data>[] }
  | { role: 'assistant'; content: AiSdkAssistantPart[] }
  | { role: 'tool'; content: AiSdkToolResultPart<Data>[] }

/** Image data: V4 wraps it (`{ type: 'data', data }`), V3 takes the base64 string itself. */
export type AiSdkFileData = { type: 'data'; data: string } | string

export type AiSdkUserPart<Data extends AiSdkFileData = AiSdkFileData> = { type: 'text'; text: string } | { type: 'file'; mediaType: string; data: Data }
export type AiSdkAssistantPart = { type: 'text'; text: string } | { type: 'reasoning'; text: string } | { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown }
export interface AiSdkToolResultPart<Data extends AiSdkFileData = AiSdkFileData> {
  type: 'tool-result'
  toolCallId: string
  toolName: string
  output: { type: 'text' | 'error-text'; value: string } | { type: 'content'; value: Array<{ type: 'text'; text: string } | { type: 'file'; mediaType: string; data: Data }> }
}

/** The call options the adapter sets; no sampling parameters, as with the other providers. */
export interface AiSdkCallOptions<Data extends AiSdkFileData = AiSdkFileData> {
  prompt: AiSdkMessage<Data>[]
  tools?: Array<{ type: 'function'; name: string; description?: string; inputSchema: Record<string, unknown> }>
  maxOutputTokens?: number
  abortSignal?: AbortSignal
}

/** Token counts as the AI SDK reports them (V3 and V4 alike). */
export interface AiSdkUsage {
  inputTokens: { total: number | undefined; noCache: number | undefined; cacheRead: number | undefined; cacheWrite: number | undefined }
  outputTokens: { total: number | undefined }
}

/** The stream parts the adapter reads; others (sources, files, raw, metadata) are skipped. */
export type AiSdkStreamPart =
  | { type: 'text-delta' | 'reasoning-delta' | 'tool-input-delta'; id: string; delta: string }
  | { type: 'tool-input-start'; id: string; toolName: string }
  | { type: 'tool-call'; toolCallId: string; toolName: string; input: string; providerExecuted?: boolean }
  | { type: 'finish'; usage: AiSdkUsage; finishReason: { unified: string; raw?: string | undefined } | string }
  | { type: 'error'; error: unknown }
  | { type: 'response-metadata'; modelId?: string | undefined; id?: string | undefined }
  | { type: string }
