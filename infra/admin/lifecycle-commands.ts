/**
 * The admin commands of the delivery lifecycle (CONTRACT section 10): an Organization's
 * suppression list (`suppression list`, `suppression remove`) and its webhook (`webhook set`,
 * which prints the signing secret once, and `webhook remove`). Apart from cli.ts, which runs the
 * command line (output, errors); what both share (targets, the action and leaf types, exit codes)
 * is in command-frame.ts.
 */
import type { Command } from 'commander';
import type { Leaf } from './command-frame';

export function addLifecycleCommands(program: Command, leaf: Leaf): void {
  const suppression = program.command('suppression').description("an Organization's suppression list: addresses that bounced permanently or complained");
  leaf(suppression, 'list', 'list the suppressed addresses, with why and when', async (store, o) => {
    const organizationId = o.org!.toLowerCase();
    const addresses = await store.listSuppressions(organizationId);
    const listed = addresses.map((a) => `${a.address} (${a.reason}, ${a.at})`).join(', ');
    return {
      human: `Organization ${organizationId} has ${addresses.length} suppressed address${addresses.length === 1 ? '' : 'es'}${listed ? `: ${listed}` : ''}`,
      json: { addresses },
    };
  }).requiredOption('--org <uuid>', 'Organization id');
  leaf(suppression, 'remove', 'take an address off the suppression list, so it is sent to again', async (store, o) => {
    const organizationId = o.org!.toLowerCase();
    const address = await store.removeSuppression(organizationId, o.address!);
    return { human: `${address} is no longer suppressed for Organization ${organizationId}`, json: { organizationId, address, suppressed: false } };
  })
    .requiredOption('--org <uuid>', 'Organization id')
    .requiredOption('--address <email>', 'the suppressed address');

  const webhook = program.command('webhook').description("an Organization's delivery webhook (Standard Webhooks signatures)");
  leaf(webhook, 'set', "set or replace the Organization's webhook URL and print its new signing secret once", async (store, o, admin) => {
    const organizationId = o.org!.toLowerCase();
    const secret = await store.setWebhook(organizationId, o.url!, admin.sealer(o.kmsKey), admin.local);
    return {
      human: `Webhook of Organization ${organizationId} now posts to ${o.url}; its signing secret (shown only this once, store it now): ${secret}`,
      json: { secret },
    };
  })
    .requiredOption('--org <uuid>', 'Organization id')
    .requiredOption('--url <url>', 'https:// endpoint (http://127.0.0.1 is allowed against the local stack only)')
    .option('--kms-key <arn>', 'with --table: the KMS key that seals the secret (stack output WebhookKeyArn; default WEBHOOK_KMS_KEY_ID)');
  leaf(webhook, 'remove', "remove the Organization's webhook; deliveries still queued are dropped", async (store, o) => {
    const organizationId = o.org!.toLowerCase();
    await store.removeWebhook(organizationId);
    return { human: `Organization ${organizationId} has no webhook any more`, json: { organizationId, webhook: false } };
  }).requiredOption('--org <uuid>', 'Organization id');
}
