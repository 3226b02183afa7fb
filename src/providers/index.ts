export * from './content'
export * from './provider'
