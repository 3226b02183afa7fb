import { createHash, randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { dirname, join, relative, sep } from 'node:path'

/**
 * A local snapshot repository for a Restate cluster on one host: the subset of the S3 API that Restate's snapshot
 * uploader uses (objects, conditional puts, listing, batch delete, multipart uploads), kept as plain files under a
 * folder. The npm `restate-server` build accepts only `s3://` destinations (a `file://` one fails with "Unsupported
 * protocol"), so the loopback cluster points `worker.snapshots` at this store. Not for production: use a real bucket.
 */
export interface SnapshotStore {
  /** Base URL for `worker.snapshots.aws-endpoint-url`, e.g. `http://127.0.0.1:54321`. */
  readonly url: string
  /** Number of objects (snapshot files) currently stored. */
  objectCount(): Promise<number>
  close(): Promise<void>
}

interface Upload { key: string; parts: Map<number, Buffer> }

interface StoreState { root: string; uploads: Map<string, Upload> }

function etagOf(body: Buffer): string {
  return `"${createHash('md5').update(body).digest('hex')}"`
}

function xml(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, { 'content-type': 'application/xml' })
  response.end(`<?xml version="1.0" encoding="UTF-8"?>\n${body}`)
}

function escapeXml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

function s3Error(response: ServerResponse, status: number, code: string, message: string): void {
  xml(response, status, `<Error><Code>${code}</Code><Message>${escapeXml(message)}</Message></Error>`)
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => resolve(Buffer.concat(chunks)))
    request.on('error', reject)
  })
}

/** The file of `bucket/key`, or undefined when the key would leave the store's folder. */
function fileOf(state: StoreState, bucket: string, key: string): string | undefined {
  const file = join(state.root, bucket, key)
  const inside = relative(state.root, file)
  return inside.startsWith('..') || inside === '' ? undefined : file
}

async function readObject(file: string): Promise<Buffer | undefined> {
  return readFile(file).catch(() => undefined)
}

async function writeObject(file: string, body: Buffer): Promise<void> {
  await mkdir(dirname(file), { recursive: true })
  const temporary = `${file}.${randomUUID()}.partial`
  await writeFile(temporary, body)
  await rename(temporary, file)
}

async function listFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => [])
  return entries.filter(entry => entry.isFile() && !entry.name.endsWith('.partial')).map(entry => join(entry.parentPath, entry.name))
}

async function putObject(state: StoreState, request: IncomingMessage, response: ServerResponse, file: string): Promise<void> {
  const body = await readBody(request)
  const existing = await readObject(file)
  const ifNoneMatch = request.headers['if-none-match']
  const ifMatch = request.headers['if-match']
  if (ifNoneMatch === '*' && existing) return s3Error(response, 412, 'PreconditionFailed', 'object exists')
  if (typeof ifMatch === 'string' && (!existing || etagOf(existing) !== ifMatch)) return s3Error(response, 412, 'PreconditionFailed', 'etag does not match')
  await writeObject(file, body)
  response.writeHead(200, { etag: etagOf(body) })
  response.end()
}

async function getObject(request: IncomingMessage, response: ServerResponse, file: string, headOnly: boolean): Promise<void> {
  const body = await readObject(file)
  if (!body) return headOnly ? void response.writeHead(404).end() : s3Error(response, 404, 'NoSuchKey', 'no such key')
  const modified = (await stat(file)).mtime.toUTCString()
  const headers = { etag: etagOf(body), 'last-modified': modified, 'accept-ranges': 'bytes', 'content-type': 'application/octet-stream' }
  const range = /^bytes=(\d*)-(\d*)$/.exec(request.headers.range ?? '')
  if (range && !headOnly) {
    const start = range[1] ? Number(range[1]) : Math.max(0, body.length - Number(range[2]))
    const end = range[1] && range[2] ? Math.min(Number(range[2]), body.length - 1) : body.length - 1
    const slice = body.subarray(start, end + 1)
    response.writeHead(206, { ...headers, 'content-length': slice.length, 'content-range': `bytes ${start}-${end}/${body.length}` })
    return void response.end(slice)
  }
  response.writeHead(200, { ...headers, 'content-length': body.length })
  response.end(headOnly ? undefined : body)
}

async function listObjects(state: StoreState, response: ServerResponse, bucket: string, query: URLSearchParams): Promise<void> {
  const prefix = query.get('prefix') ?? ''
  const delimiter = query.get('delimiter') ?? ''
  const after = query.get('continuation-token') ?? query.get('start-after') ?? ''
  const bucketDir = join(state.root, bucket)
  const keys = (await listFiles(bucketDir)).map(file => relative(bucketDir, file).split(sep).join('/')).filter(key => key.startsWith(prefix) && key > after).sort()
  const contents: string[] = []
  const prefixes = new Set<string>()
  for (const key of keys) {
    const rest = key.slice(prefix.length)
    const cut = delimiter ? rest.indexOf(delimiter) : -1
    if (cut >= 0) { prefixes.add(prefix + rest.slice(0, cut + delimiter.length)); continue }
    const file = join(bucketDir, key)
    const body = await readFile(file)
    contents.push(`<Contents><Key>${escapeXml(key)}</Key><LastModified>${(await stat(file)).mtime.toISOString()}</LastModified><ETag>${escapeXml(etagOf(body))}</ETag><Size>${body.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`)
  }
  const common = [...prefixes].map(value => `<CommonPrefixes><Prefix>${escapeXml(value)}</Prefix></CommonPrefixes>`)
  xml(response, 200, `<ListBucketResult><Name>${escapeXml(bucket)}</Name><Prefix>${escapeXml(prefix)}</Prefix><KeyCount>${contents.length + common.length}</KeyCount><MaxKeys>100000</MaxKeys><IsTruncated>false</IsTruncated>${contents.join('')}${common.join('')}</ListBucketResult>`)
}

async function deleteObjects(state: StoreState, request: IncomingMessage, response: ServerResponse, bucket: string): Promise<void> {
  const body = (await readBody(request)).toString('utf8')
  const keys = [...body.matchAll(/<Key>([\s\S]*?)<\/Key>/g)].map(match => (match[1] ?? '').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'))
  for (const key of keys) {
    const file = fileOf(state, bucket, key)
    if (file) await rm(file, { force: true })
  }
  xml(response, 200, `<DeleteResult>${keys.map(key => `<Deleted><Key>${escapeXml(key)}</Key></Deleted>`).join('')}</DeleteResult>`)
}

async function multipart(state: StoreState, request: IncomingMessage, response: ServerResponse, bucket: string, key: string, file: string, query: URLSearchParams): Promise<boolean> {
  const uploadId = query.get('uploadId')
  if (request.method === 'POST' && query.has('uploads')) {
    const id = randomUUID()
    state.uploads.set(id, { key, parts: new Map() })
    xml(response, 200, `<InitiateMultipartUploadResult><Bucket>${escapeXml(bucket)}</Bucket><Key>${escapeXml(key)}</Key><UploadId>${id}</UploadId></InitiateMultipartUploadResult>`)
    return true
  }
  if (uploadId === null) return false
  const upload = state.uploads.get(uploadId)
  if (!upload) { s3Error(response, 404, 'NoSuchUpload', 'no such upload'); return true }
  if (request.method === 'PUT') {
    const body = await readBody(request)
    upload.parts.set(Number(query.get('partNumber')), body)
    response.writeHead(200, { etag: etagOf(body) })
    response.end()
  } else if (request.method === 'POST') {
    await readBody(request)
    const body = Buffer.concat([...upload.parts.entries()].sort(([a], [b]) => a - b).map(([, part]) => part))
    await writeObject(file, body)
    state.uploads.delete(uploadId)
    xml(response, 200, `<CompleteMultipartUploadResult><Bucket>${escapeXml(bucket)}</Bucket><Key>${escapeXml(key)}</Key><ETag>${escapeXml(etagOf(body))}</ETag></CompleteMultipartUploadResult>`)
  } else {
    state.uploads.delete(uploadId)
    response.writeHead(204).end()
  }
  return true
}

async function handle(state: StoreState, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://store')
  const [bucket = '', ...rest] = url.pathname.slice(1).split('/').map(decodeURIComponent)
  const key = rest.join('/')
  if (!bucket) return s3Error(response, 400, 'InvalidBucketName', 'path-style requests only')
  if (!key) {
    if (request.method === 'GET') return listObjects(state, response, bucket, url.searchParams)
    if (request.method === 'POST' && url.searchParams.has('delete')) return deleteObjects(state, request, response, bucket)
    return void response.writeHead(200).end()
  }
  const file = fileOf(state, bucket, key)
  if (!file) return s3Error(response, 400, 'InvalidKey', 'key leaves the store')
  if (await multipart(state, request, response, bucket, key, file, url.searchParams)) return
  switch (request.method) {
    case 'PUT': return putObject(state, request, response, file)
    case 'GET': return getObject(request, response, file, false)
    case 'HEAD': return getObject(request, response, file, true)
    case 'DELETE':
      await rm(file, { force: true })
      return void response.writeHead(204).end()
    default: return s3Error(response, 405, 'MethodNotAllowed', `${request.method ?? ''} not supported`)
  }
}

/** Starts the store on `127.0.0.1:port` (0: a free port), keeping objects under `root`. */
export async function startSnapshotStore(root: string, port = 0): Promise<SnapshotStore> {
  await mkdir(root, { recursive: true })
  const state: StoreState = { root, uploads: new Map() }
  const server: Server = createServer((request, response) => {
    handle(state, request, response).catch((error: unknown) => {
      if (!response.headersSent) s3Error(response, 500, 'InternalError', String(error))
      else response.destroy()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', resolve)
  })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    objectCount: async () => (await listFiles(root)).length,
    close: () => new Promise(resolve => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}
