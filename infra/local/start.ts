/**
 * `npm start`: the local stack on 127.0.0.1 until Ctrl-C. All the work is in `stack.ts`; this
 * file reads the environment, prints, and handles signals and exit codes.
 */
import { ConfigError } from '../../functions/shared/runtime/config';
import { onClosedStdout } from './closed-pipe';
import { QUICKSTART_CURL, demoFilePath, exportLines } from './seed';
import { LocalSettingError } from './settings';
import type { LocalStack } from './stack';
import { LocalStackError, PortUnavailableError, displayPath, optionsFromEnv, startLocalStack } from './stack';

// The pinned AWS SDK warns about its future Node requirement on every start; that is not news
// for someone running the local stack, and can be turned back on by setting the variable.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// CloudWatch metric documents on the console help no one on a laptop (Powertools reads this
// variable itself); set it to false to see them.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

const say = (line = '') => process.stdout.write(`${line}\n`);
// Its reader gone (`npm start | head -5`), the stack goes on serving, and stops cleanly at Ctrl-C.
onClosedStdout();

/** A repeat of the stopping signal within this time is the same one, delivered twice. */
const SAME_SIGNAL_MS = 1_000;

function banner(stack: LocalStack): void {
  say();
  say('Local stack ready.');
  say(`  API          POST ${stack.sendUrl}`);
  say(`               POST ${stack.statusUrl}  (delivery status of sent messages)`);
  say(`               POST ${stack.cancelUrl}  (cancel scheduled messages)`);
  say(`  Settings     ${stack.settingsUrl}  (users get their own API key here: sign in with their e-mail, no password)`);
  if (stack.viewerUrl) say(`  Mail viewer  ${stack.viewerUrl}`);
  say(`  Admin        npm run --silent admin -- --help`);
  if (stack.demo) {
    const { demo } = stack;
    say();
    say(`Demo (${demo.status === 'created' ? 'just created' : 'from an earlier start'}): Organization ${demo.organizationId},`);
    say(`  user ${demo.userEmail} (${demo.userId}), sender domain ${demo.senderDomain}.`);
    say(
      stack.dataDir
        ? `  Its key is kept in ${displayPath(demoFilePath(stack.dataDir))} (local only), so these lines keep working across restarts.`
        : '  In-memory data: a new demo on every start.',
    );
    say();
    say('Send a message: paste these lines into another shell (the README\'s commands read them),');
    say();
    say(demo.exports);
    say();
    say('then:');
    say();
    say(QUICKSTART_CURL);
  } else if (stack.demoProblem) {
    say();
    say(`The saved demo no longer works as printed: ${stack.demoProblem}.`);
    say(`  Delete ${displayPath(demoFilePath(stack.dataDir ?? '.local'))} to create a new demo on the next start, or provision your own with the admin CLI`);
    say('  and set API_KEY and ORGANIZATION_ID yourself. The base URL:');
    say();
    say(exportLines(stack.apiUrl, undefined));
  }
  say();
  say('Press Ctrl-C to stop.');
}

async function main(): Promise<number> {
  say('Starting the local stack…');
  let stack: LocalStack;
  try {
    stack = await startLocalStack({ ...optionsFromEnv(process.env), log: (line) => say(`  ${line}`) });
  } catch (error) {
    if (error instanceof PortUnavailableError || error instanceof LocalStackError || error instanceof LocalSettingError || error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
  banner(stack);

  return new Promise<number>((resolve) => {
    let stopping: { signal: NodeJS.Signals; at: number } | undefined;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        // Ctrl-C in a terminal signals the whole process group, and npm forwards the signal it
        // got as well: the same signal moments after the first is that one key press.
        if (signal === stopping.signal && Date.now() - stopping.at < SAME_SIGNAL_MS) return;
        say(`${signal} again: exiting without waiting.`);
        resolve(1);
        return;
      }
      stopping = { signal, at: Date.now() };
      say(`\n${signal}: stopping…`);
      stack.stop().then(
        () => {
          say('Stopped.');
          resolve(0);
        },
        (error: unknown) => {
          process.stderr.write(`Stopping failed: ${error instanceof Error ? error.message : String(error)}\n`);
          resolve(1);
        },
      );
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`The local stack failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
