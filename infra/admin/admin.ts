/**
 * `npm run --silent admin -- <command>`: the process face of `runAdmin` (see cli.ts).
 * The exit code is set rather than forced so piped output is flushed first.
 */
import { onClosedStdout } from '../local/closed-pipe';
import { runAdmin } from './cli';

// The pinned AWS SDK warns about its future Node requirement; noise on an operator's stderr.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// Its reader gone (`… --help | head -1`), the command has nothing left to say.
onClosedStdout(() => process.exit(process.exitCode ?? 0));

runAdmin(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env }).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
