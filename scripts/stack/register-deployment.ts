/** Registers (or re-discovers, with `force`) the services endpoint with the Restate admin API. */
export async function registerDeployment(adminUrl: string, endpointUri: string): Promise<void> {
  const response = await fetch(`${adminUrl}/deployments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ uri: endpointUri, force: true }),
    signal: AbortSignal.timeout(10_000),
  })
  if (!response.ok) throw new Error(`Registering ${endpointUri} failed: ${response.status} ${await response.text()}`)
}
