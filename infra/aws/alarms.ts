/**
 * The stack's alarms, as data: each row says what it watches and when it fires; one loop makes
 * them, and every alarm notifies the alarm topic (ALARM and OK) when one is set.
 */
import { Duration } from 'aws-cdk-lib';
import type { Stack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { Alarm, ComparisonOperator, MathExpression, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { StackSettings } from './settings';

export interface AlarmRow {
  readonly id: string;
  readonly description: string;
  readonly metric: IMetric;
  readonly threshold: number;
  /** Fires above the threshold, or at it and above. */
  readonly atOrAbove?: boolean;
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm?: number;
}

/** `more`: the alarms of other parts of the stack (the delivery lifecycle's), made the same way. */
export function addAlarms(stack: Stack, api: HttpApi, sendFunction: IFunction, settings: StackSettings, more: readonly AlarmRow[] = []): Alarm[] {
  const thresholds = settings.alarms;
  const minute = Duration.minutes(1);
  const fiveMinutes = Duration.minutes(5);
  const rows: AlarmRow[] = [
    {
      // A rate, not a count, so the threshold means the same at 1 and 1000 requests a minute.
      // 502/503 are in it on purpose: the function answers them when SES or DynamoDB fail.
      id: 'ApiServerErrorRateAlarm',
      description: `More than ${thresholds.serverErrorRatePercent}% of API requests answered 5xx in 3 of the last 5 minutes`,
      metric: new MathExpression({
        label: '5xx responses (% of requests)',
        expression: 'IF(requests > 0, 100 * errors / requests, 0)',
        usingMetrics: {
          errors: api.metricServerError({ period: minute, statistic: 'Sum' }),
          requests: api.metricCount({ period: minute, statistic: 'Sum' }),
        },
        period: minute,
      }),
      threshold: thresholds.serverErrorRatePercent,
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
    },
    {
      // The handler turns every failure it foresees into a response, so an invocation error is a
      // crash, a timeout or a bad configuration: one is worth a look.
      id: 'FunctionErrorsAlarm',
      description: 'The send function failed (crash, timeout or invalid configuration)',
      metric: sendFunction.metricErrors({ period: fiveMinutes, statistic: 'Sum' }),
      threshold: 1,
      atOrAbove: true,
      evaluationPeriods: 1,
    },
    {
      id: 'FunctionThrottlesAlarm',
      description: 'The send function was throttled (account or reserved concurrency exhausted)',
      metric: sendFunction.metricThrottles({ period: fiveMinutes, statistic: 'Sum' }),
      threshold: 1,
      atOrAbove: true,
      evaluationPeriods: 1,
    },
    {
      id: 'ApiLatencyP99Alarm',
      description: `API p99 latency above ${thresholds.latencyP99Ms} ms for 15 minutes`,
      metric: api.metricLatency({ period: fiveMinutes, statistic: 'p99' }),
      threshold: thresholds.latencyP99Ms,
      evaluationPeriods: 3,
    },
  ];

  const action = settings.alarmTopicArn ? new SnsAction(Topic.fromTopicArn(stack, 'AlarmTopic', settings.alarmTopicArn)) : undefined;
  return [...rows, ...more].map((row) => {
    const alarm = new Alarm(stack, row.id, {
      alarmDescription: row.description,
      metric: row.metric,
      threshold: row.threshold,
      comparisonOperator: row.atOrAbove ? ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD : ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: row.evaluationPeriods,
      ...(row.datapointsToAlarm && { datapointsToAlarm: row.datapointsToAlarm }),
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    if (action) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
    return alarm;
  });
}
