/**
 * Turns `go build -v` stderr into a few human lines: module downloads
 * ("go: downloading …"), packages as they are compiled (-v prints only those
 * not already in the build cache) and the main packages, after which go links.
 * Emits at most one line per `minIntervalMs`, and a heartbeat with the elapsed
 * time when go is quiet (a big package or a link can take a minute).
 */
export class GoBuildProgress {
  private downloads = 0;
  private compiled = 0;
  private partial = '';
  private lastEmit = Number.NEGATIVE_INFINITY;
  private pending: string | null = null;
  private readonly started: number;

  constructor(
    private readonly emit: (line: string) => void,
    private readonly mainPackages: Record<string, string>,
    private readonly minIntervalMs = 1_000,
    private readonly now: () => number = Date.now,
  ) {
    this.started = now();
  }

  feed(chunk: string): void {
    const lines = (this.partial + chunk).split('\n');
    this.partial = lines.pop() ?? '';
    for (const raw of lines) this.line(raw.trim());
  }

  private line(line: string): void {
    if (!line) return;
    if (line.startsWith('go: downloading ')) {
      this.downloads++;
      this.offer(`downloading modules (${this.downloads} so far)`);
      return;
    }
    if (!/^[\w.~-]+(\/[\w.~+-]+)*$/.test(line)) return; // an error or warning, kept by the caller for the failure message
    const binary = this.mainPackages[line];
    if (binary) {
      this.offer(`linking ${binary}`, true);
      return;
    }
    this.compiled++;
    this.offer(`compiling ${line} (${this.compiled} packages)`);
  }

  /** Called periodically: repeats what go is doing, with the elapsed time. */
  heartbeat(): void {
    this.flush(true);
  }

  elapsed(): string {
    return formatDuration(this.now() - this.started);
  }

  private offer(message: string, urgent = false): void {
    this.pending = message;
    if (urgent || this.now() - this.lastEmit >= this.minIntervalMs) this.flush(false);
  }

  private current = 'go build is running';

  private flush(withElapsed: boolean): void {
    if (this.pending) {
      this.current = this.pending;
      this.pending = null;
    } else if (!withElapsed) return;
    this.lastEmit = this.now();
    this.emit(withElapsed ? `${this.current} — ${this.elapsed()} so far` : this.current);
  }
}

function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}
