/**
 * The CloudWatch embedded-metric-format output of a request, parsed from what the function
 * prints: message counts, failures by code, SES latency, responses by status class, and no
 * high-cardinality dimension.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Mailer } from '../../functions/shared/mail/ports';
import { SendFailure } from '../../functions/shared/mail/ports';
import type { Harness, Tenant } from '../support/harness';
import { authorised, message, sendBody, useHarness } from '../support/harness';

let h!: Harness;
let tenant!: Tenant;
useHarness((harness, first) => {
  h = harness;
  tenant = first;
});

const previous = process.env.POWERTOOLS_METRICS_DISABLED;
beforeAll(() => {
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
});
afterAll(() => {
  process.env.POWERTOOLS_METRICS_DISABLED = previous;
});

interface Emf {
  _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] };
  [key: string]: unknown;
}

async function emfOf(run: () => Promise<unknown>): Promise<Emf[]> {
  const lines: string[] = [];
  const out = jest.spyOn(process.stdout, 'write').mockImplementation(((chunk: unknown) => {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    return true;
  }) as never);
  try {
    await run();
  } finally {
    out.mockRestore();
  }
  return lines.map((line) => JSON.parse(line)).filter((entry): entry is Emf => '_aws' in entry);
}

const metricNamed = (blobs: Emf[], name: string) => blobs.filter((blob) => blob._aws.CloudWatchMetrics[0]!.Metrics.some((m) => m.Name === name));

describe('metrics', () => {
  it('counts sent messages, failures by code, SES latency and responses by status class', async () => {
    let call = 0;
    const flaky: Mailer = {
      send: async (email, signal) => {
        if (++call === 2) throw new SendFailure('MessageRejected');
        return h.deps.mailer.send(email, signal);
      },
    };
    const metrics = new Metrics({ namespace: 'EmailSendApi', serviceName: 'email-send-api' });
    const blobs = await emfOf(() =>
      h.invoke(
        { headers: authorised(tenant), body: sendBody(tenant, [message(), message(), message()]) },
        { mailer: flaky, metrics, config: { ...h.config, sendConcurrency: 1 } },
      ),
    );
    const [main] = metricNamed(blobs, 'MessagesSent');
    expect(main).toMatchObject({ MessagesSent: 2, MessagesExpired: 0, Requests: 1, service: 'email-send-api' });
    expect((main!.SesLatency as number[]).length).toBe(3);
    const [failed] = metricNamed(blobs, 'MessagesFailed');
    expect(failed).toMatchObject({ MessagesFailed: 1, Code: 'MessageRejected' });
    const [responses] = metricNamed(blobs, 'Responses');
    expect(responses).toMatchObject({ Responses: 1, StatusClass: '2xx' });
    for (const blob of blobs) {
      const dimensions = blob._aws.CloudWatchMetrics[0]!.Dimensions.flat();
      expect(dimensions).not.toContain('OrganizationId');
      expect(dimensions.every((d) => ['service', 'Code', 'StatusClass'].includes(d))).toBe(true);
    }
  });

  it('counts a refused request by its status class', async () => {
    const metrics = new Metrics({ namespace: 'EmailSendApi', serviceName: 'email-send-api' });
    const blobs = await emfOf(() => h.invoke({ headers: { 'content-type': 'application/json' }, body: sendBody(tenant) }, { metrics }));
    expect(metricNamed(blobs, 'Responses')[0]).toMatchObject({ StatusClass: '4xx' });
    expect(metricNamed(blobs, 'MessagesSent')).toHaveLength(0);
  });
});
