import { createRoot } from 'react-dom/client'
import { ChatPage } from './chat-page'

// `?gateway=http://127.0.0.1:3000&key=<API key>&session=<session id>`: the page holds no settings of its own.
const query = new URLSearchParams(window.location.search)
const root = document.getElementById('root')
if (root === null) throw new Error('no #root element')
createRoot(root).render(<ChatPage gatewayUrl={query.get('gateway') ?? ''} apiKey={query.get('key') ?? ''} sessionId={query.get('session') ?? ''} />)
