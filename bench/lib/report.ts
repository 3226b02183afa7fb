import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import type { Summary } from './stats'

/** One measured figure: a row of the table and an entry of `bench/results.json`. */
export interface Figure {
  /** Issue section (1–7) the figure answers. */
  section: number
  figure: string
  unit: string
  median: number
  p95: number
  runs: number
  /** The 99th percentile and the largest value, for figures whose tail is the point (same unit). */
  p99?: number
  max?: number
  /** Requests of the sample that failed (counted in `runs`). */
  errors?: number
  /** A ratio the section reports (to the floor, to the hand-written loop, …), with what it is a ratio to. */
  ratio?: { value: number; to: string }
  /** The target in words, and whether the median met it. */
  target?: { text: string; met: boolean }
  note?: string
}

/** Everything one bench run found: figures, and notes (explanations, failures, profile findings). */
export interface Report {
  figures: Figure[]
  notes: string[]
}

/** A figure from a summary. */
export function figureOf(section: number, figure: string, unit: string, summary: Summary, extra: Pick<Figure, 'ratio' | 'target' | 'note'> = {}): Figure {
  return { section, figure, unit, median: summary.median, p95: summary.p95, runs: summary.runs, ...extra }
}

/** A figure that is a single value (counts, sizes, statuses). */
export function single(section: number, figure: string, unit: string, value: number, extra: Pick<Figure, 'ratio' | 'target' | 'note'> = {}): Figure {
  return { section, figure, unit, median: value, p95: value, runs: 1, ...extra }
}

function format(value: number): string {
  if (!Number.isFinite(value)) return '-'
  const magnitude = Math.abs(value)
  if (magnitude >= 1000) return value.toFixed(0)
  if (magnitude >= 100) return value.toFixed(1)
  if (magnitude >= 1) return value.toFixed(2)
  return value.toFixed(3)
}

/** The compact table printed to stdout. */
export function renderTable(report: Report): string {
  const header = ['#', 'figure', 'median', 'p95', 'runs', 'unit', 'ratio', 'target', 'ok']
  const rows = report.figures.map(figure => [
    String(figure.section),
    figure.figure,
    format(figure.median),
    format(figure.p95),
    String(figure.runs),
    figure.unit,
    figure.ratio ? `${format(figure.ratio.value)}× ${figure.ratio.to}` : '',
    figure.target?.text ?? '',
    figure.target ? (figure.target.met ? 'yes' : 'NO') : '',
  ])
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map(row => (row[column] ?? '').length)))
  const line = (cells: readonly string[]): string => cells.map((cell, column) => (column >= 2 && column <= 4 ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0))).join('  ').trimEnd()
  const body = [line(header), widths.map(width => '-'.repeat(width)).join('  '), ...rows.map(line)]
  const notes = report.notes.map(note => `- ${note}`)
  return [...body, '', ...(notes.length > 0 ? ['Notes:', ...notes] : [])].join('\n')
}

function git(...args: string[]): string {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    return 'unknown'
  }
}

/** Writes `bench/results.json`: the figures with the git commit (and whether the tree had uncommitted changes). */
export function writeResults(path: string, report: Report, mode: 'quick' | 'full', elapsedMs: number): void {
  const dirty = git('status', '--porcelain').length > 0
  const document = {
    commit: git('rev-parse', 'HEAD'),
    uncommittedChanges: dirty,
    mode,
    date: new Date().toISOString(),
    elapsedSeconds: Math.round(elapsedMs / 1000),
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version },
    figures: report.figures,
    notes: report.notes,
  }
  writeFileSync(path, `${JSON.stringify(document, null, 2)}\n`)
}
