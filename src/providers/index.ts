export * from './content'
export * from './provider'
export { demoProvider } from './demo-provider'
