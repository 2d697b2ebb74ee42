/**
 * The demo's readable output: one line per step, `+<seconds since start>  <who>  <what>`. Player
 * labels get a colour of their own when stdout is a terminal (and NO_COLOR is unset).
 */

const COLOURS = [36, 33, 35, 32, 34, 91, 96, 93, 95, 92] as const;
const LABEL_WIDTH = 20;

export class Timeline {
  private readonly startedAt = performance.now();
  private readonly colour: boolean;
  private readonly colours = new Map<string, number>();

  constructor(private readonly out: NodeJS.WriteStream = process.stdout) {
    this.colour = out.isTTY === true && process.env.NO_COLOR === undefined;
  }

  /** Seconds since the demo started. */
  elapsedSeconds(): number {
    return (performance.now() - this.startedAt) / 1000;
  }

  /** A line from the demo itself (`demo`, `stack`, `control plane`, ...). */
  note(who: string, what: string): void {
    this.write(who, what, false);
  }

  /** A line from one simulated player. */
  player(label: string, what: string): void {
    this.write(label, what, true);
  }

  /** An indented continuation line without a timestamp, e.g. a child's log tail. */
  raw(text: string): void {
    this.out.write(`${text}\n`);
  }

  private write(who: string, what: string, isPlayer: boolean): void {
    const stamp = `+${this.elapsedSeconds().toFixed(3).padStart(7)}s`;
    const padded = who.padEnd(LABEL_WIDTH);
    const label = this.colour ? this.paint(who, padded, isPlayer) : padded;
    this.out.write(`${stamp}  ${label} ${what}\n`);
  }

  private paint(who: string, padded: string, isPlayer: boolean): string {
    if (!isPlayer) return `\x1b[2m${padded}\x1b[0m`;
    let code = this.colours.get(who);
    if (code === undefined) {
      code = COLOURS[this.colours.size % COLOURS.length]!;
      this.colours.set(who, code);
    }
    return `\x1b[${code}m${padded}\x1b[0m`;
  }
}

/** The first 8 characters of an id: enough to tell matches and tickets apart in a demo. */
export function short(id: string): string {
  return id.slice(0, 8);
}
