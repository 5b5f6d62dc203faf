import { useLabEngine, type RecordedEngine } from '../../host/engine.js';
import { engineRecord, labEngineMissing, labEngineNote } from '../../host/recorded-engine.js';
import { dockerEngine, requireDockerEngine } from '../../images/docker.js';
import { currentEngine } from '../../images/engine/index.js';
import { readKindState, type KindLabState } from './state.js';

/** Notes said in this process: a command that reads the lab's state twice (up's install asks for its clusters) says it once. */
const said = new Set<string>();

/**
 * Makes the engine lab `lab`'s state records the engine of every engine call of this process (none recorded: the one
 * `$OCM_LAB_ENGINE` or auto finds, as before). Returns the engine and the line saying that it overrides what the
 * environment asks, the first time that line is due (else null).
 */
export function useEngineOf(lab: string, state: KindLabState | null): { recorded: RecordedEngine | null; note: string | null } {
  const recorded = state?.runtimeState.engine ?? null;
  useLabEngine(recorded);
  const note = labEngineNote(lab, recorded, process.env);
  if (!note || said.has(note)) return { recorded, note: null };
  said.add(note);
  return { recorded, note };
}

/** `useEngineOf` for a command that only reads the lab (status, its clusters, a probe): the line, when due, on stderr. */
export function readWithEngineOf(lab: string, state: KindLabState | null): void {
  const { note } = useEngineOf(lab, state);
  if (note) process.stderr.write(`${note}\n`);
}

/** The recorded engine answers: its `<name> <version>` (`podman 4.3.1`); else exit 3 naming it, before `command` changes anything. */
export async function requireRecordedEngine(lab: string, recorded: RecordedEngine, command: string): Promise<string> {
  const engine = await dockerEngine();
  if (!engine.available) throw labEngineMissing(lab, recorded, engine.reason, command);
  return `${engine.name} ${engine.serverVersion}`;
}

/**
 * `up`'s engine for lab `lab`: a lab already up stays on the engine it was brought up with, whatever `$OCM_LAB_ENGINE`
 * or auto would take now; a new lab (or one whose state records none) takes the one found. Its `<name> <version>`, the
 * record `up` writes to the state, and the line saying it overrides the environment when it does.
 */
export async function engineForUp(lab: string): Promise<{ engine: string; record: RecordedEngine; note: string | null }> {
  const { recorded, note } = useEngineOf(lab, await readKindState(lab));
  const engine = recorded ? await requireRecordedEngine(lab, recorded, 'up') : await requireDockerEngine();
  return { engine, record: recorded ?? engineRecord((await currentEngine()).name), note };
}
