/**
 * The cold-start floor (bench/cold-start.ts): what the send function cannot do without, and
 * nothing of its own. Shaped as the functions are, an entry importing a module of its own, so
 * that it is built exactly as they are (infra/aws/startup-chunk.ts).
 */
export { handler } from './handler';
