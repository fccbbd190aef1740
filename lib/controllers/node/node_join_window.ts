/**
 * Nodes that join together get their servers' interfaces read together: the first uninitialised node to join opens
 * a short window ({@linkcode DEFAULTS.nodeJoinWindowMs}); when it closes, the servers of every node still
 * uninitialised are read in one bulk request (a burst that trickles in over several windows is still read together),
 * and each node that joined waits for that read before its own pass asks for its interfaces.
 *
 * @module
 */
import { DEFAULTS } from "../../defaults.ts";

/** What the window reads when it closes. */
interface JoinWindowOptions {
  /** The server ids of every node still uninitialised (read when the window closes). */
  joiningServerIds(): string[];
  /** Reads the interfaces of `ids` together (failures are the passes' to find). */
  prefetch(ids: string[]): Promise<void>;
  /** Window length (default {@linkcode DEFAULTS.nodeJoinWindowMs}). */
  windowMs?: number;
}

/** The window of joining nodes. */
export class JoinWindow {
  readonly #joiningServerIds: () => string[];
  readonly #prefetch: (ids: string[]) => Promise<void>;
  readonly #windowMs: number;
  /** Joining nodes and the read each one waits for. */
  readonly #joining = new Map<string, Promise<void>>();
  #open?: { names: Set<string>; read: PromiseWithResolvers<void>; timer: ReturnType<typeof setTimeout> };

  /** Creates a closed window. */
  constructor(options: JoinWindowOptions) {
    const { windowMs = DEFAULTS.nodeJoinWindowMs } = options;
    this.#joiningServerIds = () => options.joiningServerIds();
    this.#prefetch = (ids) => options.prefetch(ids);
    this.#windowMs = windowMs;
  }

  /** Node `name` joins: it waits for the read of the window open now (opened by it when none is). */
  join(name: string): void {
    if (this.#joining.has(name)) return;
    if (!this.#open) {
      const names = new Set<string>();
      const read = Promise.withResolvers<void>();
      const timer = setTimeout(() => this.#close(), this.#windowMs);
      this.#open = { names, read, timer };
    }
    this.#open.names.add(name);
    this.#joining.set(name, this.#open.read.promise);
  }

  /** Resolves once the read node `name` waits for is done (at once when it waits for none). */
  async ready(name: string): Promise<void> {
    await this.#joining.get(name);
  }

  /** Ends the open window without reading (the controller stops). */
  stop(): void {
    if (!this.#open) return;
    clearTimeout(this.#open.timer);
    this.#open.read.resolve();
    this.#open = undefined;
  }

  #close(): void {
    const window = this.#open;
    if (!window) return;
    this.#open = undefined;
    const ids = this.#joiningServerIds();
    const read = ids.length > 1 ? this.#prefetch(ids) : Promise.resolve();
    read.catch(() => {}).finally(() => {
      for (const name of window.names) this.#joining.delete(name);
      window.read.resolve();
    });
  }
}
