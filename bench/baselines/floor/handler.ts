import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { createDynamoDbClient, createSesClient } from '../../../functions/shared/runtime/clients';

const ses = createSesClient({ region: process.env.AWS_REGION ?? 'us-east-1', sesEndpoint: undefined });
const dynamodb = createDynamoDbClient({ region: process.env.AWS_REGION ?? 'us-east-1', dynamodbEndpoint: undefined });
const logger = new Logger({ serviceName: 'floor' });
const metrics = new Metrics({ namespace: 'Floor', serviceName: 'floor' });
export const handler = async () => ({ statusCode: 200, body: String([ses, dynamodb, logger, metrics].length) });
