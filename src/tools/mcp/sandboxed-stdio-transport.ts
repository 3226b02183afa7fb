import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import type { CommandSandbox, WrapOptions } from '../builtin/command-sandbox'

/** How a stdio server's process starts: its command line, workspace, exact environment and sandbox. */
export interface SandboxedStdioOptions {
  command: string
  workspace: string
  /** The process's whole environment: nothing of the host's is added. */
  env: Record<string, string>
  /** Runs the server inside this sandbox, confined to `workspace`. None: a plain `bash -c` in the workspace. */
  sandbox?: CommandSandbox
  wrapOptions?: WrapOptions
}

/**
 * An MCP stdio transport whose server runs `bash -c command` inside the session's sandbox (as `shell` commands do),
 * with exactly `env` (the SDK's own stdio transport adds the host's HOME, USER and PATH), its standard error dropped
 * (it could print a credential into the services' logs), in a process group of its own that `close` kills whole.
 */
export class SandboxedStdioTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  private child: ChildProcess | undefined
  private readonly buffer = new ReadBuffer()

  constructor(private readonly options: SandboxedStdioOptions) {}

  start(): Promise<void> {
    const { command, workspace, env, sandbox, wrapOptions } = this.options
    const { file, args, release } = sandbox ? sandbox.wrap(command, workspace, wrapOptions) : { file: 'bash', args: ['-c', command], release: undefined }
    return new Promise((resolve, reject) => {
      const child = spawn(file, args, { cwd: workspace, env, detached: true, stdio: ['pipe', 'pipe', 'ignore'] })
      this.child = child
      child.once('error', (error) => { reject(error); this.onerror?.(error) })
      child.once('spawn', () => resolve())
      child.once('exit', () => { release?.(); this.child = undefined; this.onclose?.() })
      child.stdout?.on('data', (chunk: Buffer) => this.receive(chunk))
      child.stdin?.on('error', error => this.onerror?.(error))
    })
  }

  private receive(chunk: Buffer): void {
    this.buffer.append(chunk)
    for (;;) {
      try {
        const message = this.buffer.readMessage()
        if (message === null) return
        this.onmessage?.(message)
      } catch (error) {
        this.onerror?.(error instanceof Error ? error : new Error(String(error)))
      }
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin
    if (!stdin) return Promise.reject(new Error('the MCP server process is not running'))
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve()
      else stdin.once('drain', resolve)
    })
  }

  close(): Promise<void> {
    const child = this.child
    if (child?.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }
    this.buffer.clear()
    return Promise.resolve()
  }
}
