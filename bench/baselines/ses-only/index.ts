/**
 * The cold-start baseline (bench/cold-start.ts): the least any function that sends through SES v2
 * must load. Shaped as the functions are, an entry importing a module of its own, so that it is
 * built exactly as they are (infra/aws/startup-chunk.ts).
 */
export { handler } from './handler';
