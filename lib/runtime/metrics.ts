/**
 * A small Prometheus metrics registry: counters, gauges and histograms with labels, rendered in the text exposition
 * format (version 0.0.4). Label values are escaped; metric and label names are fixed by the code.
 *
 * @module
 */

type Labels = Record<string, string>;

function labelKey(labels: Labels): string {
  return Object.keys(labels).sort().map((k) => `${k}=${labels[k]}`).join("\u0000");
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function renderLabels(labels: Labels, extra: Labels = {}): string {
  const all = { ...labels, ...extra };
  const keys = Object.keys(all);
  if (keys.length === 0) return "";
  return `{${keys.map((k) => `${k}="${escapeLabel(all[k])}"`).join(",")}}`;
}

function formatNumber(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

interface Metric {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram";
  render(): string[];
}

/** A monotonically increasing counter with labels. */
export class Counter implements Metric {
  /** Fixed by the code, never user input; by convention it ends in `_total`. */
  readonly name: string;
  /** The `# HELP` line; newlines become spaces. */
  readonly help: string;
  /** The `# TYPE` line's value. */
  readonly type = "counter" as const;
  #values = new Map<string, { labels: Labels; value: number }>();

  /** Creates a counter; use {@linkcode MetricsRegistry.counter} to register one. */
  constructor(name: string, help: string) {
    this.name = name;
    this.help = help;
  }

  /** Adds `amount` (default 1) to the series with `labels`. */
  inc(labels: Labels = {}, amount = 1): void {
    const key = labelKey(labels);
    const entry = this.#values.get(key);
    if (entry) entry.value += amount;
    else this.#values.set(key, { labels, value: amount });
  }

  /** The current value of the series with `labels` (0 when never incremented). */
  get(labels: Labels = {}): number {
    return this.#values.get(labelKey(labels))?.value ?? 0;
  }

  /** The sum over every series whose labels include `match`. */
  sum(match: Labels = {}): number {
    let total = 0;
    for (const { labels, value } of this.#values.values()) {
      if (Object.entries(match).every(([k, v]) => labels[k] === v)) total += value;
    }
    return total;
  }

  /** Renders the series lines. */
  render(): string[] {
    return [...this.#values.values()].map(({ labels, value }) =>
      `${this.name}${renderLabels(labels)} ${formatNumber(value)}`
    );
  }
}

/** A value that goes up and down, with labels; optionally computed when rendered. */
class Gauge implements Metric {
  /** Fixed by the code, never user input; also the whole series name of a computed gauge. */
  readonly name: string;
  /** The `# HELP` line; newlines become spaces. */
  readonly help: string;
  /** The `# TYPE` line's value. */
  readonly type = "gauge" as const;
  #values = new Map<string, { labels: Labels; value: number }>();
  #collect?: () => number;

  /** Creates a gauge; `collect`, when given, supplies the unlabelled value at render time. */
  constructor(name: string, help: string, collect?: () => number) {
    this.name = name;
    this.help = help;
    this.#collect = collect;
  }

  /** Sets the series with `labels`. */
  set(value: number, labels: Labels = {}): void {
    this.#values.set(labelKey(labels), { labels, value });
  }

  /** Adds `amount` to the series with `labels`. */
  add(amount: number, labels: Labels = {}): void {
    const key = labelKey(labels);
    const entry = this.#values.get(key);
    if (entry) entry.value += amount;
    else this.#values.set(key, { labels, value: amount });
  }

  /** The current value of the series with `labels`. */
  get(labels: Labels = {}): number {
    if (this.#collect && Object.keys(labels).length === 0) return this.#collect();
    return this.#values.get(labelKey(labels))?.value ?? 0;
  }

  /** Renders the series lines. */
  render(): string[] {
    if (this.#collect) return [`${this.name} ${formatNumber(this.#collect())}`];
    return [...this.#values.values()].map(({ labels, value }) =>
      `${this.name}${renderLabels(labels)} ${formatNumber(value)}`
    );
  }
}

/** A histogram with fixed buckets and labels. */
export class Histogram implements Metric {
  /** Fixed by the code; the series get `_bucket`, `_sum` and `_count` appended. */
  readonly name: string;
  /** The `# HELP` line; newlines become spaces. */
  readonly help: string;
  /** The `# TYPE` line's value. */
  readonly type = "histogram" as const;
  readonly #buckets: number[];
  #series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();

  /** Creates a histogram with upper bounds `buckets` (sorted ascending). */
  constructor(name: string, help: string, buckets: number[]) {
    this.name = name;
    this.help = help;
    this.#buckets = [...buckets].sort((a, b) => a - b);
  }

  /** Records one observation. */
  observe(value: number, labels: Labels = {}): void {
    const key = labelKey(labels);
    let series = this.#series.get(key);
    if (!series) {
      series = { labels, counts: this.#buckets.map(() => 0), sum: 0, count: 0 };
      this.#series.set(key, series);
    }
    for (let i = 0; i < this.#buckets.length; i++) if (value <= this.#buckets[i]) series.counts[i]++;
    series.sum += value;
    series.count++;
  }

  /** Number of observations of the series with `labels`. */
  count(labels: Labels = {}): number {
    return this.#series.get(labelKey(labels))?.count ?? 0;
  }

  /** Renders the bucket, sum and count lines. */
  render(): string[] {
    const lines: string[] = [];
    for (const { labels, counts, sum, count } of this.#series.values()) {
      this.#buckets.forEach((bound, i) => {
        lines.push(`${this.name}_bucket${renderLabels(labels, { le: formatNumber(bound) })} ${counts[i]}`);
      });
      lines.push(`${this.name}_bucket${renderLabels(labels, { le: "+Inf" })} ${count}`);
      lines.push(`${this.name}_sum${renderLabels(labels)} ${formatNumber(sum)}`);
      lines.push(`${this.name}_count${renderLabels(labels)} ${count}`);
    }
    return lines;
  }
}

/** A set of metrics rendered together at `/metrics`. */
export class MetricsRegistry {
  #metrics = new Map<string, Metric>();

  /** Registers (or returns the already registered) counter `name`. */
  counter(name: string, help: string): Counter {
    return this.#register(name, () => new Counter(name, help)) as Counter;
  }

  /** Registers (or returns the already registered) gauge `name`. */
  gauge(name: string, help: string, collect?: () => number): Gauge {
    return this.#register(name, () => new Gauge(name, help, collect)) as Gauge;
  }

  /** Registers (or returns the already registered) histogram `name`. */
  histogram(name: string, help: string, buckets: number[]): Histogram {
    return this.#register(name, () => new Histogram(name, help, buckets)) as Histogram;
  }

  #register(name: string, make: () => Metric): Metric {
    const existing = this.#metrics.get(name);
    if (existing) return existing;
    const metric = make();
    this.#metrics.set(name, metric);
    return metric;
  }

  /** Renders every metric in the Prometheus text format. */
  render(): string {
    const lines: string[] = [];
    for (const metric of this.#metrics.values()) {
      lines.push(`# HELP ${metric.name} ${metric.help.replace(/\n/g, " ")}`);
      lines.push(`# TYPE ${metric.name} ${metric.type}`);
      lines.push(...metric.render());
    }
    return lines.join("\n") + "\n";
  }
}
