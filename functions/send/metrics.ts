/**
 * The send endpoint's metrics (CloudWatch EMF, namespace EmailSendApi). Dimensions stay
 * low-cardinality: the service, plus `Code` (a dozen values) on failures. The Organization id is
 * never a dimension; it is in the request's log line instead.
 */
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Mailer } from '../shared/mail/ports';
import type { MessageResult } from './sending';

/** Records the request's message metrics and returns the counts by status for its log line. */
export function recordResults(metrics: Metrics, results: readonly MessageResult[]): { sent: number; expired: number; failed: number; scheduled?: number } {
  const count = (status: MessageResult['Status']) => results.filter((result) => result.Status === status).length;
  const scheduled = count('Scheduled');
  const counts = { sent: count('Sent'), expired: count('Expired'), failed: count('Failed'), ...(scheduled > 0 && { scheduled }) };
  metrics.addMetric('MessagesSent', MetricUnit.Count, counts.sent);
  metrics.addMetric('MessagesExpired', MetricUnit.Count, counts.expired);
  if (scheduled > 0) metrics.addMetric('MessagesScheduled', MetricUnit.Count, scheduled);
  const failures = new Map<string, number>();
  for (const result of results) {
    if (result.Status === 'Failed') failures.set(result.Error.Code, (failures.get(result.Error.Code) ?? 0) + 1);
  }
  for (const [code, n] of failures) {
    const failed = metrics.singleMetric();
    failed.addDimension('Code', code);
    failed.addMetric('MessagesFailed', MetricUnit.Count, n);
  }
  return counts;
}

/** Records how long each SES call took, whatever its outcome. */
export function timedMailer(mailer: Mailer, metrics: Metrics, now: () => number): Mailer {
  return {
    async send(email, signal) {
      const started = now();
      try {
        return await mailer.send(email, signal);
      } finally {
        metrics.addMetric('SesLatency', MetricUnit.Milliseconds, now() - started);
      }
    },
  };
}
