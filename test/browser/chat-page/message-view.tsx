import { getToolName, isToolUIPart } from 'ai'
import type { DynamicToolUIPart, ToolUIPart, UIMessage } from 'ai'
import { useState } from 'react'

/** What the gateway puts in a `data-question` part: the question and the link that answers it without an API key. */
interface QuestionData { id?: string; kind?: string; question?: string; options?: string[]; answerUrl?: string }

/** One message: its text (all text parts, in order) in `message-text`, then each tool, question and sub-agent part. */
export function MessageView({ message, onApproval }: { message: UIMessage; onApproval: (id: string, approved: boolean) => void }) {
  const text = message.parts.map(part => (part.type === 'text' ? part.text : '')).join('')
  return (
    <article data-testid="message" data-role={message.role} data-message-id={message.id}>
      <pre data-testid="message-text">{text}</pre>
      {message.parts.map((part, index) => {
        if (isToolUIPart(part)) return <ToolView key={part.toolCallId} part={part} onApproval={onApproval} />
        if (part.type === 'data-question') return <QuestionView key={`question-${index}`} data={part.data as QuestionData} />
        if (part.type === 'data-subagent') return <pre key={`subagent-${index}`} data-testid="subagent">{JSON.stringify(part.data)}</pre>
        return null
      })}
    </article>
  )
}

/** A tool call with its state; one waiting for approval has Approve and Deny buttons. */
function ToolView({ part, onApproval }: { part: ToolUIPart | DynamicToolUIPart; onApproval: (id: string, approved: boolean) => void }) {
  const approval = part.state === 'approval-requested' ? part.approval : undefined
  return (
    <div data-testid="tool" data-tool-name={getToolName(part)} data-state={part.state} data-call-id={part.toolCallId}>
      <code>{getToolName(part)} {JSON.stringify(part.input)}</code> <span data-testid="tool-state">{part.state}</span>
      {part.state === 'output-available' ? <pre data-testid="tool-output">{typeof part.output === 'string' ? part.output : JSON.stringify(part.output)}</pre> : null}
      {part.state === 'output-error' ? <pre data-testid="tool-error">{part.errorText}</pre> : null}
      {approval === undefined ? null : (
        <span>
          <button type="button" data-testid="approve" onClick={() => onApproval(approval.id, true)}>Approve</button>
          <button type="button" data-testid="deny" onClick={() => onApproval(approval.id, false)}>Deny</button>
        </span>
      )}
    </div>
  )
}

/** A question the run waits on: the answer goes straight to its answer link. */
function QuestionView({ data }: { data: QuestionData }) {
  const [answer, setAnswer] = useState('')
  const [sent, setSent] = useState<number | undefined>(undefined)
  const submit = async (): Promise<void> => {
    if (data.answerUrl === undefined) return
    const response = await fetch(data.answerUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ answer }) })
    setSent(response.status)
  }
  return (
    <div data-testid="question" data-question-id={data.id} data-answered={sent === undefined ? 'no' : String(sent)}>
      <p data-testid="question-text">{data.question}</p>
      <input data-testid="answer-input" value={answer} onChange={event => setAnswer(event.target.value)} />
      <button type="button" data-testid="answer" onClick={() => void submit()}>Answer</button>
    </div>
  )
}
