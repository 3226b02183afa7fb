export * from './zidane-error'
