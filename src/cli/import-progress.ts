// Progress of a long import on stderr: a bar that redraws itself on a terminal (cli-progress), a line per log otherwise.
import { MultiBar, Presets, type SingleBar } from "cli-progress";
import type { Output } from "./output.js";

/** Tells how an import goes, log by log; what else it says (failures, skips) goes above the bar. */
export interface ImportProgress {
  /** A log was stored (`id`) or passed over (`undefined`). */
  done(index: number, name: string, id: string | undefined): void;
  /** A line for stderr (ending in "\n") that must not be drawn over. */
  note(text: string): void;
  stop(): void;
}

/**
 * The progress of importing `total` logs: nothing for one log, a bar on a terminal, otherwise
 * a line per stored log ("imported 3/39 FILE → ID"). `unit` names what is counted on the bar.
 */
export function importProgress(out: Output, total: number, unit = "logs"): ImportProgress {
  const terminal = out.errTerminal;
  if (total > 1 && terminal !== undefined) return barProgress(terminal, total, unit);
  return {
    done: (index, name, id) => {
      if (total > 1 && id !== undefined) {
        out.err(`imported ${index + 1}/${total} ${name} ${out.errPaint.dim(`→ ${id}`)}\n`);
      }
    },
    note: (text) => out.err(text),
    stop: () => {},
  };
}

function barProgress(stream: NodeJS.WritableStream, total: number, unit: string): ImportProgress {
  const bars = new MultiBar(
    {
      stream,
      format: `importing [{bar}] {value}/{total} ${unit} {file}`,
      hideCursor: true,
      clearOnComplete: false,
      // Redraw at most every 100 ms: a fast import of many small logs stays cheap.
      fps: 10,
    },
    Presets.shades_classic,
  );
  const bar: SingleBar = bars.create(total, 0, { file: "" });
  return {
    done: (index, name) => bar.update(index + 1, { file: name }),
    note: (text) => bars.log(text),
    // A last redraw first: lines told since the last one are written then, not dropped.
    stop: () => {
      bars.update();
      bars.stop();
    },
  };
}
