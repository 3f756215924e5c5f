/** What the SES emulator stored, read over its HTTP API as any client could. */

export interface StoredEmail {
  messageId: string;
  from: string;
  destination: { to: string[]; cc: string[]; bcc: string[] };
  subject: string;
  body: { text?: string; html?: string };
  at: number;
}

export async function sentEmails(sesUrl: string): Promise<StoredEmail[]> {
  const response = await fetch(`${sesUrl}/store`);
  return ((await response.json()) as { emails: StoredEmail[] }).emails;
}

/** Empties the store (shared by every emulator instance in the process). */
export async function clearEmails(sesUrl: string): Promise<void> {
  const response = await fetch(`${sesUrl}/clear-store`, { method: 'POST' });
  if (!response.ok) throw new Error(`the SES emulator did not clear its store (${response.status})`);
}
