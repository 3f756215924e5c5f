// Tests never reach AWS: placeholder credentials and a table name let the production wiring in
// `functions/send/handler.ts` load; every test builds its own dependencies against the emulators.
process.env.AWS_ACCESS_KEY_ID ??= 'test';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
process.env.AWS_REGION ??= 'us-east-1';
process.env.TABLE_NAME ??= 'email-send-api-test';
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
// Metrics print CloudWatch EMF to stdout; tests that check them turn them on for themselves.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
