import { createLiveHub } from './live-hub'
import type { LiveHub } from './live-hub'

/** The services process's one live hub: the handlers publish to it, the live server serves it. */
export const processLiveHub: LiveHub = createLiveHub()
