// Narrates the demo's JSON-RPC traffic: each request and response on one readable line, long arrays summarised.
import type { SeedlineClient } from "../../client/seedline-client.js";
import { RPC_METHOD } from "../../generated.js";
import { cutToWidth } from "../../util/text-width.js";
import type { Output } from "../output.js";
import { errorCode } from "../report.js";

/** A method of the client, by its client name (`sessionCreate`). */
export type ClientMethod = keyof typeof RPC_METHOD;
/**
 * Each client method's name as a value (`CALL.sessionCreate` is "sessionCreate"), so that calls
 * name methods without spelling any string of the method table.
 */
export const CALL = Object.fromEntries(Object.keys(RPC_METHOD).map((name) => [name, name])) as {
  readonly [K in ClientMethod]: K;
};
type ParamsOf<K extends ClientMethod> = Parameters<SeedlineClient[K]>[0];
type ResultOf<K extends ClientMethod> = Awaited<ReturnType<SeedlineClient[K]>>;

/** Text that is shown as it is inside a rendered value (a summary in place of a long array). */
class Summary {
  constructor(readonly text: string) {}
}

/**
 * A value as compact one-line JSON for people: `events`, `chunks` and `entries` arrays become a
 * count and their kinds, any other array longer than four items a count, long strings are cut.
 */
export function compactJson(value: unknown): string {
  return render(summarise(value, undefined));
}

function summarise(value: unknown, key: string | undefined): unknown {
  if (Array.isArray(value)) {
    if (key === "events")
      return new Summary(`‹${value.length} events: ${runsOf(value.map((e) => e?.type))}›`);
    if (key === "chunks") return new Summary(`‹${value.length} chunks›`);
    if (key === "entries") {
      return new Summary(`‹${value.length} entries: ${runsOf(value.map((e) => e?.kind))}›`);
    }
    if (value.length > 4) return new Summary(`‹${value.length} items›`);
    return value.map((v) => summarise(v, undefined));
  }
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, summarise(v, k)]));
  }
  if (typeof value === "string") return cutToWidth(value, 72);
  return value;
}

/** "a, b, 3× c, d": repeated neighbours counted. */
function runsOf(names: readonly unknown[]): string {
  const runs: string[] = [];
  for (let i = 0; i < names.length; ) {
    let j = i;
    while (j < names.length && names[j] === names[i]) j++;
    runs.push(j - i > 1 ? `${j - i}× ${String(names[i])}` : String(names[i]));
    i = j;
  }
  return runs.join(", ");
}

function render(value: unknown): string {
  if (value instanceof Summary) return value.text;
  if (Array.isArray(value)) return `[${value.map(render).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${render(v)}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "undefined";
}

/**
 * Writes the demo's story: section titles, what each step achieved, and every request sent
 * through the client with its answer, under the method's wire name.
 */
export class Narrator {
  readonly #out: Output;
  readonly #client: SeedlineClient;
  #section = 0;

  constructor(out: Output, client: SeedlineClient) {
    this.#out = out;
    this.#client = client;
  }

  /** A plain line. */
  line(text = ""): void {
    this.#out.out(`${text}\n`);
  }

  /** A numbered section title. */
  section(title: string): void {
    this.#out.out(`\n${this.#out.paint.bold(`${++this.#section}. ${title}`)}\n`);
  }

  /** What a step achieved, in words. */
  done(text: string): void {
    this.#out.out(`   ${this.#out.paint.green("✓")} ${text}\n`);
  }

  /** Sends one request, printing it and its answer; an error is printed and rethrown. */
  async request<K extends ClientMethod>(method: K, params: ParamsOf<K>): Promise<ResultOf<K>> {
    this.#sent(method, params);
    try {
      const result = await this.#call(method, params);
      this.#out.out(
        `   ${this.#out.paint.magenta("←")} ${this.#out.paint.dim(compactJson(result))}\n`,
      );
      return result;
    } catch (error) {
      this.#failed(error);
      throw error;
    }
  }

  /**
   * Sends a request that must fail with `code`, printing it and the error.
   * @throws Error when it succeeds or fails otherwise.
   */
  async refused<K extends ClientMethod>(
    method: K,
    params: ParamsOf<K>,
    code: string,
  ): Promise<void> {
    this.#sent(method, params);
    try {
      await this.#call(method, params);
    } catch (error) {
      this.#failed(error);
      if (errorCode(error) === code) return;
      throw error;
    }
    throw new Error(`expected ${RPC_METHOD[method]} to fail with ${code}, got a result`);
  }

  #call<K extends ClientMethod>(method: K, params: ParamsOf<K>): Promise<ResultOf<K>> {
    const call = this.#client[method] as (params: ParamsOf<K>) => Promise<ResultOf<K>>;
    return call.call(this.#client, params);
  }

  #sent(method: ClientMethod, params: unknown): void {
    const { paint } = this.#out;
    const wire = RPC_METHOD[method];
    this.#out.out(`   ${paint.cyan("→")} ${paint.bold(wire)} ${paint.dim(compactJson(params))}\n`);
  }

  #failed(error: unknown): void {
    const { paint } = this.#out;
    const code = errorCode(error) ?? "error";
    const message = error instanceof Error ? error.message : String(error);
    this.#out.out(`   ${paint.magenta("←")} ${paint.red(`error ${code}`)}: ${message}\n`);
  }
}
