import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

// Every relative Markdown link of the user docs points at a file that exists, and every `#anchor` into a Markdown file
// names one of its headings, as GitHub renders them.

const root = join(import.meta.dirname, '..', '..')
const documents = [
  'README.md',
  ...readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' }).filter(path => path.endsWith('.md')).map(path => join('docs', path)),
  'ingress-gateway/README.md',
  'ingress-gateway/ERRORS.md',
  'bench/README.md',
  'src/restate/README.md',
  'src/providers/anthropic/README.md',
]

/** The lines of a Markdown file with those of fenced code blocks blanked (code never holds a heading or a link). */
function outsideFences(markdown: string): string[] {
  let fence: string | undefined
  return markdown.split('\n').map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (marker !== undefined && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined
      return ''
    }
    return fence === undefined ? line : ''
  })
}

/** GitHub's heading id: lowercase, punctuation other than `-` and `_` dropped, each space a `-`. */
function githubSlug(heading: string): string {
  const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '').trim().toLowerCase()
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-')
}

/** The anchors of a Markdown file's ATX headings; a repeated heading gets `-1`, `-2`, … as on GitHub. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const ids = new Set<string>()
  for (const line of outsideFences(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1]
    if (heading === undefined) continue
    const slug = githubSlug(heading)
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    ids.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return ids
}

/** The targets of inline links and images, and of reference definitions, outside code. */
function linkTargets(markdown: string): string[] {
  const lines = outsideFences(markdown).map(line => line.replace(/(`+)[^`]*?\1/g, ''))
  const inline = lines.flatMap(line => Array.from(line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g), match => match[1] ?? ''))
  const definitions = lines.flatMap(line => /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line)?.[1] ?? [])
  return [...inline, ...definitions]
}

/** Why a relative link of `document` is broken, or undefined when it resolves. */
function brokenLink(document: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined
  const [path = '', anchor] = target.split('#', 2)
  const file = path === '' ? join(root, document) : join(root, dirname(document), decodeURIComponent(path))
  if (!existsSync(file)) return `${document}: ${target} → no file ${relative(root, file)}`
  if (anchor === undefined || !file.endsWith('.md') || statSync(file).isDirectory()) return undefined
  if (!anchors(readFileSync(file, 'utf8')).has(decodeURIComponent(anchor))) return `${document}: ${target} → no heading #${anchor} in ${relative(root, file)}`
  return undefined
}

describe('documentation links', () => {
  it('reads the README, every file of docs/ and the folder READMEs', () => {
    expect(documents).toEqual(expect.arrayContaining(['README.md', 'docs/http-api.md', 'docs/security.md', 'bench/README.md']))
    expect(documents.filter(path => path.startsWith('docs/design/')).length).toBeGreaterThan(0)
  })

  it('every relative link points at an existing file, and every #anchor at a heading there', () => {
    const broken = documents.flatMap(document => linkTargets(readFileSync(join(root, document), 'utf8')).map(target => brokenLink(document, target)))
    expect(broken.filter(reason => reason !== undefined)).toEqual([])
  })
})

describe('the link checker', () => {
  it('makes the ids GitHub makes', () => {
    expect(githubSlug('Steer a session — `POST /v1/sessions/{sessionId}/messages`')).toBe('steer-a-session--post-v1sessionssessionidmessages')
    expect(githubSlug('On Restate (`zidane/restate`)')).toBe('on-restate-zidanerestate')
    expect(githubSlug('Configuration (environment)')).toBe('configuration-environment')
    expect(githubSlug('What you see in Restate\'s CLI and UI')).toBe('what-you-see-in-restates-cli-and-ui')
    expect(githubSlug('snake_case and kebab-case')).toBe('snake_case-and-kebab-case')
  })

  it('numbers repeated headings and ignores headings and links inside code', () => {
    const ids = anchors('# Notes\n\n## Notes\n\n```sh\n# not a heading\n```\n')
    expect([...ids]).toEqual(['notes', 'notes-1'])
    expect(linkTargets('[a](x.md#y) `[b](code.md)`\n```\n[c](fenced.md)\n```\n![d](img.png "t")\n[e]: ref.md')).toEqual(['x.md#y', 'img.png', 'ref.md'])
  })

  it('reports a missing file and a missing heading', () => {
    expect(brokenLink('README.md', 'docs/nowhere.md')).toContain('no file docs/nowhere.md')
    expect(brokenLink('README.md', 'docs/security.md#nowhere')).toContain('no heading #nowhere')
    expect(brokenLink('README.md', '#quickstart')).toBeUndefined()
    expect(brokenLink('README.md', 'https://restate.dev')).toBeUndefined()
  })
})
