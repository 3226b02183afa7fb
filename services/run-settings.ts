import type { ToolDef } from 'zidane'
import type { ServicesConfig } from './config'
import type { RunSettings } from '../contract/session'
import type { ShellStatus } from './shell-policy'
import type { ToolOffer } from './tool-selection'

/** The settings of this process for a run that starts now, with `offeredTools` the names its selection keeps. */
export function currentRunSettings(config: ServicesConfig, offeredTools: readonly string[], env: NodeJS.ProcessEnv): RunSettings {
  const settings: RunSettings = {
    maxTurns: config.defaultMaxTurns,
    approveTools: [...config.approveTools],
    denyTools: [...config.denyTools],
    compactBudgetTokens: config.compactBudgetTokens,
    maxChildDepth: config.maxChildDepth,
    maxChildrenPerTurn: config.maxChildrenPerTurn,
    maxChildrenPerRun: config.maxChildrenPerRun,
    tools: [...offeredTools],
  }
  if (env.ZIDANE_MODEL) settings.model = env.ZIDANE_MODEL
  if (config.questionTimeoutMs !== undefined) settings.questionTimeoutMs = config.questionTimeoutMs
  if (config.approvalTimeoutMs !== undefined) settings.approvalTimeoutMs = config.approvalTimeoutMs
  if (config.maxCostUsd !== undefined) settings.maxCostUsd = config.maxCostUsd
  return settings
}

/** What this process offers now: the names its selection keeps and how its shell runs. */
export interface CurrentTools {
  offered: readonly string[]
  shell: ShellStatus
}

/**
 * The tools of `candidates` that `settings` offers, in the candidates' order: the run's own selection, so a tool the
 * operator adds later is not offered to it. A tool the operator takes away is, but its calls are refused from then
 * on (an error result saying why) when the refusal is a journaled step result, as for every tool that does not
 * journal itself: a refused call leaves the same commands in the journal as one that ran, and the calls made before
 * replay as they were. `shell` is also refused when this process cannot sandbox it as its policy demands, never run
 * without the sandbox. The tools that journal themselves (`ask_user`, `present_plan`, `spawn`) keep working: a refusal
 * would change the commands their earlier calls left.
 */
export function toolsOfSettings(candidates: readonly ToolDef[], settings: RunSettings, current: CurrentTools): ToolDef[] {
  const pinned = new Set(settings.tools)
  const offeredNow = new Set(current.offered)
  return candidates.filter(tool => pinned.has(tool.spec.name)).map((tool) => {
    if (tool.journal === 'self') return tool
    if (tool.spec.name === 'shell' && current.shell.mode === 'disabled') return refusingTool(tool, current.shell.reason)
    return offeredNow.has(tool.spec.name) ? tool : refusingTool(tool, 'the operator has disabled it since this run started')
  })
}

/** A run's tools, from `candidates` built with `tools`' shell: those `settings` offer ({@link toolsOfSettings}). */
export function runToolSet(tools: ToolOffer, candidates: readonly ToolDef[], settings: RunSettings, offered: readonly string[]): ToolDef[] {
  return toolsOfSettings(candidates, settings, { offered, shell: tools.capability.status })
}

/** `tool` with every call refused (an error result naming `reason`); its spec and flags unchanged. */
function refusingTool(tool: ToolDef, reason: string): ToolDef {
  return { ...tool, execute: async () => ({ content: `The ${tool.spec.name} tool cannot run on this services process: ${reason}.`, isError: true }) }
}
