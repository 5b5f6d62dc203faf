import type { CommandModule } from 'yargs';
import { loadLabConfig } from '../../config/index.js';
import { ExitCode, InvalidInputError } from '../../errors.js';
import { DEFAULT_SCENARIO_DIR, listScenarios, pickScenarios, resolveDocumentEnvironment, runTutorial, tutorialPlace } from '../../scenario/index.js';
import type { GlobalOptions } from '../output.js';
import { runDocumentsFromCli } from './scenario.js';

type Args = GlobalOptions & { name: string; resume: boolean; step?: number; dir?: string };

/** The command line that continues the walk where it stopped. */
function resumeCommand(argv: Args): string {
  const quote = (s: string) => (/^[\w./:=@-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  const config = argv.config && argv.config !== process.env.OCM_LAB_CONFIG ? ` -c ${quote(argv.config)}` : '';
  return `ocm-lab${config} tutorial ${quote(argv.name)} --resume${argv.dir ? ` --dir ${quote(argv.dir)}` : ''}`;
}

export const tutorialCommand: CommandModule<GlobalOptions, Args> = {
  command: 'tutorial <name>',
  describe: 'walk a document step by step in the terminal: its prose, then its command, run on Enter (or edited first), checked (✔/✘)',
  builder: (y) =>
    y
      .positional('name', { type: 'string', demandOption: true, describe: 'document name (see scenario list)' })
      .option('resume', { type: 'boolean', default: false, describe: 'continue where the last walk through this document stopped' })
      .option('step', { type: 'number', describe: 'start at step N (1-based), keeping what earlier steps exported' })
      .option('dir', { type: 'string', describe: `folder of documents (default: ${DEFAULT_SCENARIO_DIR})` }),
  handler: async (argv) => {
    if (argv.resume && argv.step !== undefined) throw new InvalidInputError('--resume and --step both say where to start: give one');
    const [scenario] = pickScenarios(await listScenarios(argv.dir ?? DEFAULT_SCENARIO_DIR), [argv.name]);
    const steps = scenario!.steps.length;
    if (argv.step !== undefined && !(Number.isInteger(argv.step) && argv.step >= 1 && argv.step <= steps))
      throw new InvalidInputError(`--step ${argv.step}: ${scenario!.name} has steps 1 to ${steps}`);
    const config = await loadLabConfig(argv.config);
    const environment = await resolveDocumentEnvironment(config, scenario!);
    try {
      if (!process.stdin.isTTY) {
        process.stderr.write(`tutorial: stdin is not a terminal, so ${scenario!.name} runs as 'ocm-lab scenario run' runs it\n`);
        await runDocumentsFromCli(argv, { names: [scenario!.name], requireAll: true, environment });
        return;
      }
      const start = argv.resume ? 'resume' : argv.step !== undefined ? { step: argv.step } : 'first';
      const terminal = { input: process.stdin, output: process.stdout, colour: !!process.stdout.isTTY && !process.env.NO_COLOR };
      const end = await runTutorial(scenario!, environment, terminal, {
        place: tutorialPlace(config.name, scenario!),
        start,
        resumeCommand: resumeCommand(argv),
      });
      if (end.kind === 'interrupted') process.exitCode = ExitCode.interrupted;
      if (end.kind === 'input-closed') process.exitCode = ExitCode.inputClosed;
    } finally {
      await environment.dispose?.();
    }
  },
};
