import { FileToolFailure } from './file-tool-failure.ts'

/**
 * Compiles a glob into a regular expression matched against a whole `/`-separated relative path. Supports `*` (any
 * characters but `/`), `**` as a whole segment (any number of segments), `?` (one character but `/`), `{a,b}`
 * (alternatives, nestable) and `\` to escape the next character; everything else is literal. Dotfiles get no special care.
 */
export function compileGlob(pattern: string): RegExp {
  try {
    const regex = new RegExp(`^${translateGlob(pattern)}$`)
    // V8 compiles a pattern at its first match: one too large fails only then, so match once here.
    regex.test('')
    return regex
  } catch {
    // Braces nested thousands deep overflow the stack of the translation or of V8's parser; a huge glob is too large.
    throw new FileToolFailure('invalid_pattern', 'Invalid glob: it is too long or nests braces too deeply to compile.')
  }
}

function translateGlob(pattern: string): string {
  let source = ''
  let index = 0
  while (index < pattern.length) {
    const [piece, consumed] = translateAt(pattern, index)
    source += piece
    index += consumed
  }
  return source
}

/** Translates the token starting at `index`: the regex source and how many characters of the glob it used. */
function translateAt(pattern: string, index: number): [string, number] {
  const char = pattern.charAt(index)
  if (char === '*') return translateStar(pattern, index)
  if (char === '?') return ['[^/]', 1]
  if (char === '{') return translateBraces(pattern, index)
  if (char === '\\' && index + 1 < pattern.length) return [escapeRegex(pattern.charAt(index + 1)), 2]
  return [escapeRegex(char), 1]
}

function translateStar(pattern: string, index: number): [string, number] {
  if (pattern.charAt(index + 1) !== '*') return ['[^/]*', 1]
  const atSegmentStart = index === 0 || pattern.charAt(index - 1) === '/'
  const next = pattern.charAt(index + 2)
  if (atSegmentStart && next === '/') return ['(?:[^/]*/)*', 3]
  if (atSegmentStart && next === '') return ['.*', 2]
  return ['[^/]*', 2]
}

function translateBraces(pattern: string, index: number): [string, number] {
  const close = findClosingBrace(pattern, index)
  if (close === -1) return ['\\{', 1]
  const alternatives = splitTopLevel(pattern.slice(index + 1, close)).map(translateGlob)
  return [`(?:${alternatives.join('|')})`, close - index + 1]
}

function findClosingBrace(pattern: string, open: number): number {
  let depth = 0
  for (let index = open; index < pattern.length; index += 1) {
    const char = pattern.charAt(index)
    if (char === '\\') index += 1
    else if (char === '{') depth += 1
    else if (char === '}' && --depth === 0) return index
  }
  return -1
}

/** Splits brace content on commas that are not inside nested braces. */
function splitTopLevel(content: string): string[] {
  const parts: string[] = []
  let depth = 0
  let start = 0
  for (let index = 0; index < content.length; index += 1) {
    const char = content.charAt(index)
    if (char === '\\') index += 1
    else if (char === '{') depth += 1
    else if (char === '}') depth -= 1
    else if (char === ',' && depth === 0) { parts.push(content.slice(start, index)); start = index + 1 }
  }
  parts.push(content.slice(start))
  return parts
}

function escapeRegex(char: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(char) ? `\\${char}` : char
}
