/**
 * A reader that stops early (`npm run admin -- --help | head -1`, `npm start | head -5`) closes
 * the pipe under stdout: what is written after that has nowhere to go, which is no error of the
 * program's. Without a listener, Node throws that EPIPE as an uncaught exception, with a stack
 * trace, and the program stops wherever it was.
 */
export function onClosedStdout(then: () => void = () => undefined): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    then();
  });
}
