import { useChat } from '@ai-sdk/react'
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai'
import { useMemo, useState } from 'react'
import type { FormEvent } from 'react'
import { MessageView } from './message-view'

/** Where the page talks to: the gateway's base URL, an API key of a tenant, and the session (the chat's id). */
export interface ChatPageProps { gatewayUrl: string; apiKey: string; sessionId: string }

/**
 * A stock `useChat` page on the gateway's AI SDK routes: the transport has only the chat URL and the key (plus where
 * to resume), and `resume: true` reattaches to the run in progress after a reload.
 */
export function ChatPage({ gatewayUrl, apiKey, sessionId }: ChatPageProps) {
  const sessionUrl = `${gatewayUrl}/v1/sessions/${encodeURIComponent(sessionId)}`
  const headers = useMemo(() => ({ authorization: `Bearer ${apiKey}` }), [apiKey])
  const transport = useMemo(() => new DefaultChatTransport({
    api: `${sessionUrl}/chat`,
    headers,
    prepareReconnectToStreamRequest: () => ({ api: `${sessionUrl}/chat/stream`, headers }),
  }), [sessionUrl, headers])
  const chat = useChat({ id: sessionId, resume: true, transport, sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses })
  const [prompt, setPrompt] = useState('')

  const send = (event: FormEvent): void => {
    event.preventDefault()
    if (prompt.trim() === '') return
    void chat.sendMessage({ text: prompt })
    setPrompt('')
  }
  // Stopping the fetch alone would leave the run going on the server: cancel the invocation, then stop reading.
  const stopRun = async (): Promise<void> => {
    await fetch(`${sessionUrl}/cancel`, { method: 'POST', headers })
    await chat.stop()
  }

  return (
    <main>
      <p>status: <span data-testid="status">{chat.status}</span></p>
      {chat.error === undefined ? null : <p data-testid="error">{chat.error.message}</p>}
      <section data-testid="messages">
        {chat.messages.map(message => (
          <MessageView key={message.id} message={message} onApproval={(id, approved) => void chat.addToolApprovalResponse({ id, approved })} />
        ))}
      </section>
      <form onSubmit={send}>
        <textarea data-testid="prompt" value={prompt} onChange={event => setPrompt(event.target.value)} />
        <button type="submit" data-testid="send">Send</button>
        <button type="button" data-testid="stop" onClick={() => void stopRun()}>Stop</button>
      </form>
    </main>
  )
}
